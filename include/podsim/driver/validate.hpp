// The validation use case: every row of a published table (Megatron-LM SC21 Table 1 and tables like it)
// predicted as a podsim run and compared with the published throughput. `podsim validate` declares the
// options and prints; nothing here is tuned per row.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "podsim/core/csv_table.hpp"

namespace podsim::driver {

struct ValidationRequest {
  std::string table_file;     // published rows (validation/*.csv)
  std::string topology_file;  // the machine they were measured on
  std::string workload_file;  // the workload whose keys each row overrides
};

struct ValidationRow {
  std::string params_billion;
  int gpus = 0, tp = 0, pp = 0, dp = 0, micro_batch = 0, virtual_stages = 1;
  double published_tflops = 0;  // per GPU, as the table gives it
  double predicted_tflops = 0;  // per GPU, 0 when the run did not fit
  double error_percent = 0;     // 100 * (predicted - published) / published
  double step_time = 0;
  std::string status;  // the run's status: ok, out_of_memory, ...
};

struct ValidationHooks {
  std::function<void(const CsvTable&)> table_read;                                    // before any row runs
  std::function<void(size_t index, size_t count, const ValidationRow&)> row_started;  // geometry only
  std::function<void(const ValidationRow&)> row_done;
};

struct Validation {
  std::vector<ValidationRow> rows;
  double mean_abs_error = 0, max_abs_error = 0;  // percent
};

// Throws InputError for an unreadable table or a row without a column the prediction needs.
Validation validate(const ValidationRequest& request, const ValidationHooks& hooks = {});

// DIR/validation.csv: one line per row, the prediction beside the published number (DIR is created).
void write_validation_csv(const std::string& dir, const Validation& validation);

// The --json document for this table: one object per row in the fields the NVIDIA schema's rows have
// (row_id = the row's number in the table, system = the topology file, model, status, predicted, published,
// error_percent), with metric tflops_per_gpu.
std::string validation_json(const ValidationRequest& request, const Validation& validation);

}  // namespace podsim::driver
