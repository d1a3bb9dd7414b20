// What `podsim plan` shows and writes: the ranked table (stdout), plan.csv and plan.html.
#pragma once

#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "podsim/driver/plan_search.hpp"

namespace podsim::driver {

// plan.csv: one row per candidate that fits (simulated ones ranked first); units in the column names.
std::vector<std::string> plan_csv_columns(const Space& space);
void write_plan_csv(std::ostream& out, const Space& space, const PlanResult& result);
std::string plan_csv(const Space& space, const PlanResult& result);  // what write_plan_csv writes

// The winner against the runner-up: the cost category whose time differs most, and by how much.
std::string explain_winner(const PlanResult& result);

// The ranked table of the `top` best, the search's counts and the skipped combinations by reason.
void print_plan(std::FILE* out, const Space& space, const PlanResult& result, int top);

// Writes plan.csv and plan.html into `dir` (created); returns the files written.
std::vector<std::string> write_plan_files(const std::string& dir, const std::string& title,
                                          const Space& space, const PlanResult& result);

}  // namespace podsim::driver
