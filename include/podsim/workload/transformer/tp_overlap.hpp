// How Transformer Engine's userbuffers overlap each tensor-parallel GEMM with its communication
// (`parallel.tp_overlap: true`, `parallel.tp_overlap_gemms`). TE names ten GEMMs of a transformer layer
// and runs each with one of three methods (TransformerEngine transformer_engine/pytorch/module/base.py,
// initialize_ub: get_default_config):
//   - ring_exchange (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: the all-gather before a GEMM): the GEMM
//     runs as tp chunks of tokens/tp rows (tp/2 chunks of 2 tokens/tp with `aggregate`), each on the chunk
//     a peer sent over NVLink by the copy engines while the previous chunk computed; no SM is taken.
//   - pipeline (proj_fprop, fc2_fprop: the reduce-scatter after a row-parallel GEMM): the GEMM runs as
//     num_splits chunks, each chunk's reduce-scatter on num_sm SMs beside the next chunk's GEMM; with
//     set_sm_margin the GEMMs are launched on the other SMs; the last chunk's reduce-scatter is exposed.
//   - bulk (qkv_dgrad, fc1_dgrad: the all-gather of the saved sequence-parallel input the wgrad GEMM needs;
//     qkv_wgrad, fc1_wgrad: the reduce-scatter of the input gradient): the whole collective runs on num_sm
//     SMs beside the whole GEMM, which (set_sm_margin or not) has the other SMs while it runs.
// TE's defaults: ring_exchange with num_splits = tp and 1 SM; pipeline 16 SMs, 4 splits, SM margin; bulk 16
// SMs, SM margin. Megatron-Bridge / NeMo performance recipes override them per model and GPU
// (nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py); the NVIDIA validation recipes set them
// (validation/nvidia-presets.yaml).
#pragma once

#include <array>
#include <string>

#include "podsim/core/config_node.hpp"
#include "podsim/topology/device_spec.hpp"

namespace podsim::workload {

struct ParallelConfig;

enum class UbMethod { ring_exchange, pipeline, bulk };

// The ten GEMMs Transformer Engine names (the row-parallel layers' wgrads, proj_wgrad and fc2_wgrad, move
// no tensor-parallel data).
enum class UbGemm {
  qkv_fprop,
  proj_fprop,
  fc1_fprop,
  fc2_fprop,
  qkv_dgrad,
  qkv_wgrad,
  fc1_dgrad,
  fc1_wgrad,
  proj_dgrad,
  fc2_dgrad
};
inline constexpr int kUbGemms = 10;
const char* to_string(UbGemm g);

struct UbOverlap {
  UbMethod method = UbMethod::ring_exchange;
  int num_sm = 1;          // SMs the communication kernel holds (pipeline, bulk)
  int num_splits = 0;      // pipeline chunks (ring_exchange: tp, not configurable)
  bool aggregate = false;  // ring_exchange: two received chunks per GEMM
  bool set_sm_margin = false;
};

struct TpOverlapGemms {
  std::array<UbOverlap, kUbGemms> gemm;
  const UbOverlap& operator[](UbGemm g) const { return gemm[static_cast<int>(g)]; }
  UbOverlap& operator[](UbGemm g) { return gemm[static_cast<int>(g)]; }
};

// Transformer Engine's default configuration of every GEMM.
TpOverlapGemms te_default_tp_overlap();

// parallel.tp_overlap_gemms: a mapping from TE's GEMM names to {method, num_sm, num_splits, aggregate,
// set_sm_margin}; what is not given keeps TE's default. A method a GEMM cannot use (ring_exchange for a
// reduce-scatter after a row-parallel GEMM, bulk for the forward) is an error.
TpOverlapGemms read_tp_overlap_gemms(const ConfigNode& par);

// Userbuffers' overlap is a Hopper-and-newer feature (NeMo enables tp_comm_overlap on H100 and later). Until
// the topology says the architecture, Hopper or newer is recognised by an fp8 tensor-core peak, which the
// presets give exactly to H100, H200 and newer GPUs.
bool userbuffers_supported(const topology::DeviceSpec& device);

// Whether the userbuffers overlap runs: asked for (parallel.tp_overlap), with tp > 1 and sequence
// parallelism (what it overlaps), on a device that has it. The step builder and the plan bound cost the
// kernels with this, so the two never disagree.
bool tp_overlap_in_effect(const ParallelConfig& p, const topology::DeviceSpec& device);

}  // namespace podsim::workload
