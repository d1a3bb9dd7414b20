// What the forked simulation process sends back to its parent: a ReplayResult, or the message of the
// exception that stopped it (private to the engine; see replay.cpp).
#pragma once

#include <string>

#include "podsim/engine/replay.hpp"

namespace podsim::engine {

std::string encode_result(const ReplayResult& r);
std::string encode_error(const std::string& message);
// Throws std::runtime_error carrying the child's message, or when the bytes are not a result of this build.
ReplayResult decode_result(const std::string& bytes);

}  // namespace podsim::engine
