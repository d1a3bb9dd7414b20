// parallel.tp_overlap_gemms and Transformer Engine's defaults (tp_overlap.hpp).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/names.hpp"
#include "podsim/workload/transformer/tp_overlap.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {
namespace {

inline constexpr auto kUbGemmNames = name_table<UbGemm>({{UbGemm::qkv_fprop, "qkv_fprop"},
                                                         {UbGemm::proj_fprop, "proj_fprop"},
                                                         {UbGemm::fc1_fprop, "fc1_fprop"},
                                                         {UbGemm::fc2_fprop, "fc2_fprop"},
                                                         {UbGemm::qkv_dgrad, "qkv_dgrad"},
                                                         {UbGemm::qkv_wgrad, "qkv_wgrad"},
                                                         {UbGemm::fc1_dgrad, "fc1_dgrad"},
                                                         {UbGemm::fc1_wgrad, "fc1_wgrad"},
                                                         {UbGemm::proj_dgrad, "proj_dgrad"},
                                                         {UbGemm::fc2_dgrad, "fc2_dgrad"}});
inline constexpr auto kUbMethodNames = name_table<UbMethod>(
    {{UbMethod::ring_exchange, "ring_exchange"}, {UbMethod::pipeline, "pipeline"}, {UbMethod::bulk, "bulk"}});

// TE runs the backward all-gather of the saved input and the reduce-scatter of the input gradient of the
// column-parallel layers as bulk overlaps only; the other six GEMMs are ring_exchange or pipeline.
bool is_bulk_gemm(UbGemm g) {
  return g == UbGemm::qkv_dgrad || g == UbGemm::qkv_wgrad || g == UbGemm::fc1_dgrad || g == UbGemm::fc1_wgrad;
}

// TE's defaults for a method (get_default_config): ring_exchange 1 SM (its copies run on the copy
// engines), pipeline and bulk 16 SMs with an SM margin, pipeline 4 splits.
UbOverlap method_default(UbMethod m) {
  switch (m) {
    case UbMethod::pipeline: return {.method = m, .num_sm = 16, .num_splits = 4, .set_sm_margin = true};
    case UbMethod::bulk: return {.method = m, .num_sm = 16, .set_sm_margin = true};
    case UbMethod::ring_exchange:
    default: return {.method = UbMethod::ring_exchange, .num_sm = 1};
  }
}

void read_one(const ConfigNode& node, UbGemm g, UbOverlap& o) {
  UbMethod chosen = is_bulk_gemm(g) ? choice_or(node, "method", kUbMethodNames, {UbMethod::bulk}, o.method)
                                    : choice_or(node, "method", kUbMethodNames,
                                                {UbMethod::ring_exchange, UbMethod::pipeline}, o.method);
  if (chosen != o.method) o = method_default(chosen);  // the other fields start from TE's defaults
  o.num_sm = static_cast<int>(node.integer_in_or("num_sm", 1, 1024, o.num_sm));
  if (o.method == UbMethod::pipeline)
    o.num_splits = static_cast<int>(node.integer_in_or("num_splits", 1, 64, o.num_splits));
  else if (node.has("num_splits"))
    node.fail("num_splits", fmt::format("only a pipeline overlap has num_splits ({} is {}: ring_exchange "
                                        "runs tp chunks, bulk one GEMM)",
                                        to_string(g), kUbMethodNames.name(o.method)));
  o.aggregate = node.boolean_or("aggregate", o.aggregate);
  if (o.aggregate && o.method != UbMethod::ring_exchange)
    node.fail("aggregate", "aggregate (two received chunks per GEMM) applies to ring_exchange only");
  o.set_sm_margin = node.boolean_or("set_sm_margin", o.set_sm_margin);
  node.reject_unknown_keys();
}

}  // namespace

const char* to_string(UbGemm g) {
  return kUbGemmNames.name(g);
}

TpOverlapGemms te_default_tp_overlap() {
  TpOverlapGemms c;
  for (int i = 0; i < kUbGemms; ++i) {
    auto g = static_cast<UbGemm>(i);
    bool rs_after = g == UbGemm::proj_fprop || g == UbGemm::fc2_fprop;
    c[g] = method_default(is_bulk_gemm(g) ? UbMethod::bulk
                          : rs_after      ? UbMethod::pipeline
                                          : UbMethod::ring_exchange);
  }
  return c;
}

TpOverlapGemms read_tp_overlap_gemms(const ConfigNode& par) {
  TpOverlapGemms c = te_default_tp_overlap();
  auto node = par.optional_child("tp_overlap_gemms");
  if (!node) return c;
  for (const std::string& key : node->keys()) {
    auto g = kUbGemmNames.parse(key);
    if (!g)
      node->fail(key, fmt::format("unknown GEMM '{}' (Transformer Engine's userbuffers names: {})", key,
                                  kUbGemmNames.valid_list()));
    read_one(node->child(key), *g, c[*g]);
  }
  return c;
}

bool userbuffers_supported(const topology::DeviceSpec& device) {
  return device.peak_flops.count(topology::Precision::fp8) > 0;
}

bool tp_overlap_in_effect(const ParallelConfig& p, const topology::DeviceSpec& device) {
  return p.tp_overlap && p.tp > 1 && p.sequence_parallel && userbuffers_supported(device);
}

}  // namespace podsim::workload
