#include "podsim/workload/registry.hpp"

#include <algorithm>

#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/moe/gshard_builder.hpp"
#include "podsim/workload/ps/ctr_ps_model.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/wafer/cerebras_model.hpp"

namespace podsim::workload {
namespace {

// The training setup several kinds describe in the same terms (model size, parallel degrees, batch,
// recompute, precision) comes first, so that rows of different kinds line up in one results table.
const std::vector<std::string> kSharedSettingColumns = {"model_params_billion",
                                                        "tp",
                                                        "pp",
                                                        "dp",
                                                        "ep",
                                                        "schedule",
                                                        "virtual_stages",
                                                        "micro_batch",
                                                        "global_batch",
                                                        "microbatches",
                                                        "recompute",
                                                        "sequence_parallel",
                                                        "zero",
                                                        "precision"};

// The shared columns, then each kind's own in the order of this list (a column goes where it first
// appears). summary.csv's header is a contract: a new kind appends its list at the end.
std::vector<std::string> merged_setting_columns() {
  std::vector<std::string> columns = kSharedSettingColumns;
  for (const auto& kind_columns :
       {megatron_setting_columns(), gshard_setting_columns(), cerebras_setting_columns(),
        ctr_ps_setting_columns(), megatron_cp_setting_columns()})
    for (const auto& column : kind_columns)
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
  return columns;
}

}  // namespace

// Each workload kind lives in its own folder (include/podsim/workload/<kind>/, src/workload/<kind>/) and
// registers here with one line, plus its setting columns in merged_setting_columns().
const WorkloadRegistry& workload_registry() {
  static const WorkloadRegistry registry = {
      .by_kind =
          {
              {"transformer_lm", &make_megatron_model},
              {"gshard_moe", &make_gshard_model},
              {"ctr_sparse_ps", &make_ctr_ps_model},
          },
      .by_kind_on_machine =
          {
              {"transformer_lm", &topology::is_family<topology::WaferClusterSpec>, &make_cerebras_model},
          },
      .setting_columns = merged_setting_columns(),
      .late_setting_columns = megatron_late_setting_columns(),
  };
  return registry;
}

WorkloadFactory workload_factory(const WorkloadRegistry& registry, const std::string& kind,
                                 const topology::Topology& topo) {
  for (const auto& machine : registry.by_kind_on_machine)
    if (machine.kind == kind && machine.applies(topo)) return machine.factory;
  return registry.by_kind.at(kind);
}

}  // namespace podsim::workload
