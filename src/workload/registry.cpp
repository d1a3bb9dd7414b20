#include "podsim/workload/registry.hpp"

#include "podsim/workload/moe/gshard_builder.hpp"
#include "podsim/workload/ps/ctr_ps_model.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/wafer/cerebras_model.hpp"

namespace podsim::workload {

// Each workload kind lives in its own folder (include/podsim/workload/<kind>/, src/workload/<kind>/) and
// registers here with one line.
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
              {{"transformer_lm", "wafer_cluster"}, &make_cerebras_model},
          },
  };
  return registry;
}

}  // namespace podsim::workload
