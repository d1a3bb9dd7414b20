// One row of a published table in NVIDIA's NeMo / Megatron-Bridge schema (system, model, num_gpus,
// precision, gbs, mbs, seq_len, fsdp, tp, pp, cp, vp, ep, tokens_per_sec_per_gpu) and the podsim run it
// becomes: the presets the mapping names, the recipe's settings, then the row's own columns as --set
// overrides (the mechanism `podsim run --set` uses).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "podsim/core/csv_table.hpp"
#include "podsim/driver/preset_mapping.hpp"
#include "podsim/driver/simulation.hpp"

namespace podsim::driver {

struct NvidiaRow {
  std::string row_id, system, model, precision;  // precision as the table normalizes it (BF16, FP8, ...)
  std::string release;  // the container release the row was published for ("25.09"); empty: none stated
  // Unset when the cell is empty or "n/a". cp, vp, ep and fsdp then mean 1, none, 1 and 0 (DDP).
  std::optional<long long> num_gpus, gbs, mbs, seq_len, fsdp, tp, pp, cp, vp, ep;
  std::optional<long long> ga;      // gradient-accumulation steps where the table has them: a cross-check
  std::optional<double> published;  // tokens/s per GPU
  // The optional settings column: what the published run changed from its recipe, as workload keys
  // ("moe.dispatcher=alltoall" per entry of "moe.dispatcher=alltoall; moe.overlap=combined_1f1b"), for
  // tables of ablations; plan_nvidia_row applies them after the recipe's settings.
  std::vector<std::string> settings;
};

// Throws InputError naming file:line and column for a cell that is neither empty, "n/a" nor a number, and
// for a settings entry that is not key=value of a key a recipe may set.
NvidiaRow read_nvidia_row(const CsvTable& table, size_t i);

// The row's settings as the table writes them ("moe.dispatcher=alltoall; moe.overlap=combined_1f1b"); "" for
// none.
std::string settings_text(const NvidiaRow& row);

// podsim's training.precision for the table's precision name; empty when it has none.
std::string podsim_precision(const std::string& table_precision);

struct RowPlan {
  std::string not_expressible;  // why the row cannot be written as a podsim run; empty when it can
  RunRequest request;
  int dp = 0;
};

// The run for a row. `devices_per_node` is the system's topology preset's. The request's sets are, in
// order: the recipe's settings (set, set_on its system, before_release newer than its release), the row's
// settings column, then the row's other columns. Entries the mapping lacks or marks null, mixture-of-experts
// rows (ep > 1), unstated values and a GPU count the parallel degrees do not divide are not_expressible.
RowPlan plan_nvidia_row(const NvidiaRow& row, const PresetMapping& mapping, int devices_per_node);

}  // namespace podsim::driver
