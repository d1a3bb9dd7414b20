// A simulated plan candidate's outcome as JSON: in plan shard files (plan_shards.cpp) and in the journal of
// an interrupted search (plan_journal.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "podsim/driver/plan_search.hpp"

namespace podsim::driver {

nlohmann::json sim_outcome_json(const SimOutcome& s);

// nlohmann::json::exception when a field is missing or of another type; `hints` may be missing (shard files
// of earlier builds have none).
SimOutcome sim_outcome_from(const nlohmann::json& j);

}  // namespace podsim::driver
