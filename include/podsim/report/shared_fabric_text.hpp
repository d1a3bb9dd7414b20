// How jobs sharing a fabric read: the terminal summary and jobs.csv (one row per job, units in the names).
#pragma once

#include <string>

#include "podsim/report/shared_fabric_result.hpp"

namespace podsim::report {

std::string shared_fabric_summary(const SharedFabricResult& r);
std::string shared_fabric_csv(const SharedFabricResult& r);

}  // namespace podsim::report
