// Mixture-of-experts decoder layers on GPUs (the `moe:` section of a transformer_lm workload) and the
// expert parallelism that places them (parallel.ep, parallel.etp), as Megatron-Core builds them: a MoE
// layer replaces the dense MLP by a router, `experts` routed experts of which each token uses `top_k`,
// and optional shared experts every token passes through.
#pragma once

#include "podsim/core/names.hpp"

namespace podsim {
class ConfigNode;
namespace topology {
struct DeviceSpec;
}
}  // namespace podsim

namespace podsim::workload {

struct WorkloadConfig;
struct ParallelConfig;

// Router score: softmax over the experts (Mixtral, Qwen3, GPT-OSS) or per-expert sigmoid (DeepSeek-V3).
enum class MoeRouter { softmax, sigmoid };
inline constexpr auto kMoeRouterNames =
    name_table<MoeRouter>({{MoeRouter::softmax, "softmax"}, {MoeRouter::sigmoid, "sigmoid"}});
// Megatron-Core's token dispatchers: all-to-all over the EP group, or all-gather of every EP rank's tokens
// (each rank keeps those its local experts need) with a reduce-scatter to combine, or the flex dispatcher
// (moe_token_dispatcher_type "flex" with the DeepEP or HybridEP backend): a token bound for several
// experts on one remote node crosses the inter-node network once and is forwarded inside that node over
// NVLink to each rank holding one of them (and its combine is reduced there before it returns), so the
// bytes follow the distinct nodes and ranks a token's top-k experts live on, not top_k
// (moe_math.hpp routed_to_any_of, network/expert_dispatch.hpp).
enum class MoeDispatcher { alltoall, allgather, flex };
// Megatron-Core's default for the flex dispatcher's SMs when moe_flex_dispatcher_num_sms is unset: DeepEP's
// 20 (transformer_config.py, "historical default 20"; github NVIDIA/Megatron-LM @ d98e8a64dd).
inline constexpr int kFlexDispatcherSms = 20;
inline constexpr auto kMoeDispatcherNames =
    name_table<MoeDispatcher>({{MoeDispatcher::alltoall, "alltoall"},
                               {MoeDispatcher::allgather, "allgather"},
                               {MoeDispatcher::flex, "flex"}});
// dispatch: the dispatch / combine communication runs beside the shared experts' compute
// (Megatron-Core moe_shared_expert_overlap); combined_1f1b: Megatron-Core's combined 1F1B
// (--overlap-moe-expert-parallel-comm): each steady-state forward runs with a backward of another
// microbatch, layer by layer, the all-to-alls of one beside the other's compute (moe_combined_1f1b.cpp);
// none: serially.
enum class MoeOverlap { none, dispatch, combined_1f1b };
inline constexpr auto kMoeOverlapNames =
    name_table<MoeOverlap>({{MoeOverlap::none, "none"},
                            {MoeOverlap::dispatch, "dispatch"},
                            {MoeOverlap::combined_1f1b, "combined_1f1b"}});

// moe.probs: where the router's probabilities weight the expert outputs. activation = inside the experts'
// activation (Megatron-Core's weighted SwiGLU since its "memory efficient token permutation", 2025-04-09:
// the unpermute is a pure permutation that keeps nothing for its backward but indices; the probabilities
// are kept per routed copy); unpermute = in the weighted sum after the experts (older Megatron-Core, and
// GShard's combine), whose backward needs every expert output for the probabilities' gradient.
enum class MoeProbs { activation, unpermute };
inline constexpr auto kMoeProbsNames =
    name_table<MoeProbs>({{MoeProbs::activation, "activation"}, {MoeProbs::unpermute, "unpermute"}});

struct MoeConfig {
  long long experts = 0;  // routed experts; 0 = a dense model (no `moe:` section)
  long long top_k = 0;
  long long ffn_hidden = 0;          // per routed expert
  long long shared_experts = 0;      // experts every token goes through
  long long shared_ffn_hidden = 0;   // per shared expert
  long long layer_freq = 1;          // layer i is MoE when i % layer_freq == 0 (Megatron moe_layer_freq)
  long long first_dense_layers = 0;  // the first layers stay dense (DeepSeek-V3: 3)
  MoeRouter router = MoeRouter::softmax;
  // Group-limited routing (Megatron-Core moe_router_num_groups / moe_router_group_topk; DeepSeek-V3's
  // node-limited routing, 8 groups of which a token uses 4): the experts in `router_groups` contiguous
  // groups, a token's top_k chosen among the experts of its best `router_group_topk` groups. 1 / 1 = none.
  long long router_groups = 1, router_group_topk = 1;
  double capacity_factor = 0;  // tokens an expert takes, as a multiple of the mean; 0 = dropless
  double imbalance = 1;        // the busiest expert's tokens / the mean (1 = balanced routing)
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
  MoeOverlap overlap = MoeOverlap::none;
  MoeProbs probs = MoeProbs::activation;
  // Host (CPU) time to launch one MoE block's forward / backward kernels in eager PyTorch
  // (moe.host_forward_us, moe.host_backward_us; 0 = never host-bound). The dropless all-to-all dispatcher
  // copies the tokens per expert to the host (a device-host sync) before the grouped GEMMs, so the GPU cannot
  // run ahead of the CPU there: a block whose kernels and dispatch take less device time than this waits for
  // the host.
  double host_forward_s = 0, host_backward_s = 0;
  // SMs the dispatch and combine kernels hold while they run (moe.dispatcher_sms; for the flex dispatcher
  // Megatron-Core's moe_flex_dispatcher_num_sms, default 20 = DeepEP's; Megatron-Bridge's perf recipes give
  // HybridEP 32). Compute the schedule runs beside them (moe.overlap) has the other SMs only. 0 (the NCCL
  // dispatchers' default): the device profile's overlap_compute_slowdown, as for every NCCL collective.
  int dispatcher_sms = 0;
  // Devices per node of the topology the workload runs on (0 = unknown: an EP group is taken to sit in one
  // node), set by read_moe_section; the EP ranks sharing a node follow from it and the layout
  // (moe_math.hpp ep_group_nodes), so that a plan candidate's ep and etp count, not the file's.
  int devices_per_node = 0;

  bool enabled() const { return experts > 0; }
  bool dropless() const { return capacity_factor <= 0; }
};

// parallel.ep and parallel.etp into `p` (called by read_transformer_workload before it rejects unknown
// parallel keys).
void read_expert_parallel(const ConfigNode& par, ParallelConfig& p);
// The `moe:` section (absent: w.moe stays disabled), its defaults from the model section, and every rule
// tying it to the model and the parallel layout: InputError at the key that breaks one.
void read_moe_section(const ConfigNode& root, WorkloadConfig& w, int devices, int devices_per_node = 0);
// moe.overlap combined_1f1b's requirements on the parallel layout and training (Megatron-Core's checks):
// InputError at moe.overlap. read_moe_section runs it; `podsim plan` runs it again per candidate.
void validate_moe_overlap(const WorkloadConfig& w, const ConfigNode& root);
// moe.dispatcher_sms must leave the device SMs to compute on: InputError at the key otherwise.
void check_dispatcher_sms_on_device(const ConfigNode& root, const MoeConfig& moe,
                                    const topology::DeviceSpec& device);

}  // namespace podsim::workload
