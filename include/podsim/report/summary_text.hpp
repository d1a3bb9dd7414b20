// The short human summary `podsim run` prints.
#pragma once

#include <string>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

std::string human_summary(const RunResult& r);

}  // namespace podsim::report
