// `podsim validate --table` for tables in NVIDIA's schema (validation/nvidia-pretraining-h100-b200.csv):
// each selected row becomes a podsim run through the preset mapping (nvidia_row.hpp), and its predicted
// tokens/s per GPU is set beside the published one. Rows that cannot run are listed with the reason.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "podsim/core/csv_table.hpp"
#include "podsim/driver/nvidia_row.hpp"

namespace podsim::driver {

// Which schema a validation table is in; throws InputError naming the columns either one needs.
enum class TableSchema { megatron_sc21, nvidia };
TableSchema detect_schema(const CsvTable& table);

struct NvidiaValidationRequest {
  std::string table_file;
  std::string mapping_file;       // validation/nvidia-presets.yaml
  std::set<std::string> systems;  // only rows of these systems; all when empty
  std::set<std::string> row_ids;  // only these rows; all when empty (an id not in the table is an error)
};

struct NvidiaRowResult {
  NvidiaRow row;
  int dp = 0;
  std::string status;  // ok | not_expressible | out_of_memory | error
  std::string detail;  // the reason (not_expressible), or the run's message
  double predicted = 0, error_percent = 0, step_time = 0;  // ok rows only
  // The `podsim run` command line that simulates the row (every expressible row), paths relative to the
  // working directory: what to run to see the row's breakdown, trace and report.
  std::string command;
};

struct NvidiaValidation {
  std::string table_file, mapping_file;
  std::vector<NvidiaRowResult> rows;
  int ok_rows = 0;
  double mean_abs_error = 0, max_abs_error = 0;  // percent, over the ok rows
};

struct NvidiaValidationHooks {
  std::function<void(const CsvTable&, const PresetMapping&)> table_read;  // before any row runs
  std::function<void(size_t index, size_t count, const NvidiaRow&)> row_started;
  std::function<void(const NvidiaRowResult&)> row_done;
};

// Throws InputError for an unreadable table or mapping, a malformed cell, an unknown --rows id and a
// mapping entry used by a selected row whose preset file does not exist (before any row runs). A row whose
// run is an input error (a key this build does not have yet, an impossible layout) is status error.
NvidiaValidation validate_nvidia_table(const NvidiaValidationRequest& request,
                                       const NvidiaValidationHooks& hooks = {});

// DIR/validation.csv (DIR is created) and the JSON document (one object per row, and the summary).
void write_nvidia_validation_csv(const std::string& dir, const NvidiaValidation& validation);
std::string nvidia_validation_json(const NvidiaValidation& validation);

}  // namespace podsim::driver
