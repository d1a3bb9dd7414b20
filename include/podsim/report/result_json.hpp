// result.json: everything a run produced, for other tools. Schema (README.md, "result.json"):
//   summary      summary.csv's row as JSON values: numbers as numbers, true/false as booleans, an empty
//                cell as null, names and status as strings (each number is the same decimal text
//                summary.csv has, so both parse to the same value)
//   provenance   podsim version, command line, every --set, input files with SHA-256, time (UTC)
//   search       the auto-search's candidates as rows {candidate, status, step_time_s, samples_per_step,
//                chosen}; search_log: the same as text lines
//   status_detail, out_of_memory, description, stragglers, inputs, metrics, lanes, kernels, notes, engine
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

// One summary.csv cell as a JSON value: "" -> null; a text column (status, names) -> string; a decimal
// number -> an integer or a double of exactly that text; "true" / "false" -> a boolean; anything else ->
// string.
nlohmann::ordered_json summary_cell_json(const std::string& column, const std::string& text);

nlohmann::ordered_json provenance_json(const Provenance& p);

}  // namespace podsim::report
