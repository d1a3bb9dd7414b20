// The property test's generator of random valid configurations (tests/test_properties.cpp), shared with the
// metamorphic tests that perturb random configurations (tests/test_metamorphic.cpp). Deterministic: the
// same seed draws the same configuration on every platform.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "podsim/topology/loader.hpp"
#include "test_helpers.hpp"

namespace podsim::testing {

// splitmix64: the same stream on every platform (std distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  bool chance(double p) { return (next() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  T pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int>(v.size())))];
  }

 private:
  std::uint64_t state_;
};

struct Case {
  std::string family;  // "transformer_lm/gpu_cluster", ...
  std::string topology, workload;
  std::vector<std::string> sets;
  std::string repro() const {
    std::string s = fmt::format("podsim run --topology {} --workload {}", topology, workload);
    for (const auto& k : sets) s += " --set '" + k + "'";
    return s;
  }
  std::string get(const std::string& key) const {  // value of a --set key, "" when not set
    for (const auto& k : sets)
      if (k.rfind(key + "=", 0) == 0) return k.substr(key.size() + 1);
    return "";
  }
};

inline int compute_devices(const std::string& topology, const std::vector<std::string>& topo_sets) {
  topology::Overrides o;
  for (const auto& s : topo_sets) {
    auto eq = s.find('=');
    o.emplace_back(s.substr(9, eq - 9), s.substr(eq + 1));  // strip "topology."
  }
  return topology::load_topology(source_path(topology), o).compute_device_count();
}

// Mostly a precision the device has a peak for (the rest exercise the error path).
inline std::string precision_of(Rng& r, const std::string& topology, const std::vector<std::string>& choices) {
  auto topo = topology::load_topology(source_path(topology), {});
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string p = r.pick(choices);
    if (topo.device.peak_flops.count(topology::parse_precision(p)) || r.chance(0.05)) return p;
  }
  return r.pick(choices);
}

inline std::string num(double v) {
  return fmt::format("{:g}", v);
}

inline Case transformer_on_gpus(Rng& r) {
  Case c;
  c.family = "transformer_lm/gpu_cluster";
  c.topology = r.pick<std::string>({"topologies/dgx-a100-superpod.yaml", "topologies/dgx-h100-superpod.yaml",
                                    "topologies/dgx-h200-superpod.yaml", "topologies/dgx2h-v100.yaml",
                                    "topologies/gpu-ps-4node.yaml"});
  c.workload = "workloads/gpt2-small.yaml";
  c.sets.push_back("topology.nodes=" + std::to_string(r.pick<int>({1, 1, 2, 4})));
  int devices = compute_devices(c.topology, c.sets);
  int heads = r.pick<int>({4, 8, 16}), layers = r.pick<int>({2, 4, 8}), seq = r.pick<int>({128, 256, 512});
  int tp = r.pick<int>({1, 2, 4, 8});
  while (tp > heads || tp > devices) tp /= 2;
  int pp = r.pick<int>({1, 1, 2, 4});
  while (pp > layers || tp * pp > devices) pp /= 2;
  int max_dp = devices / (tp * pp);
  bool dp_auto = r.chance(0.4);
  int dp = dp_auto ? max_dp : r.pick<int>({max_dp, std::max(1, max_dp / 2), 1});
  std::string schedule = r.pick<std::string>({"gpipe", "1f1b", "interleaved"});
  if (schedule == "interleaved" && pp == 1) schedule = "1f1b";
  std::string virtual_stages = r.pick<std::string>({"auto", "1", "2"});
  if (virtual_stages == "2" && (schedule != "interleaved" || layers % (2 * pp))) virtual_stages = "1";
  if (virtual_stages == "1" && schedule == "interleaved") virtual_stages = "auto";
  std::string micro_batch = r.pick<std::string>({"auto", "1", "2", "4"});
  int mb = micro_batch == "auto" ? r.pick<int>({1, 2, 4}) : std::stoi(micro_batch);
  int microbatches = schedule == "interleaved" ? pp * r.pick<int>({1, 2}) : r.pick<int>({1, 2, 4, 8});
  int zero = pp > 1 ? r.pick<int>({0, 1}) : r.pick<int>({0, 1, 2, 3});
  auto set = [&](const std::string& k, const std::string& v) { c.sets.push_back("workload." + k + "=" + v); };
  set("model.layers", std::to_string(layers));
  set("model.heads", std::to_string(heads));
  set("model.hidden", std::to_string(heads * 64));
  set("model.ffn_hidden", std::to_string(heads * 256));
  set("model.seq_len", std::to_string(seq));
  set("model.vocab", std::to_string(r.pick<int>({8192, 32768})));
  set("parallel.tp", std::to_string(tp));
  set("parallel.pp", std::to_string(pp));
  set("parallel.dp", dp_auto ? "auto" : std::to_string(dp));
  set("parallel.schedule", schedule);
  set("parallel.virtual_stages", virtual_stages);
  set("parallel.zero", std::to_string(zero));
  bool sequence_parallel = r.chance(0.3);
  set("parallel.sequence_parallel", sequence_parallel ? "true" : "false");
  set("parallel.dp_overlap", r.chance(0.5) ? "true" : "false");
  set("parallel.dp_algorithm", r.pick<std::string>({"ring", "tree", "hierarchical"}));
  set("training.global_batch", std::to_string(dp * mb * microbatches));
  set("training.micro_batch", micro_batch);
  set("training.recompute", r.pick<std::string>({"none", "selective", "full"}));
  set("training.precision", precision_of(r, c.topology, {"fp16", "fp16", "bf16", "fp32", "tf32", "fp8"}));
  // Context parallelism and the TP overlap, drawn last so that the draws above stay as they were.
  if (r.chance(0.3) && !dp_auto && tp * pp * dp * 2 <= devices) {
    set("parallel.cp", "2");
    set("parallel.cp_algorithm", r.pick<std::string>({"ring", "all_gather"}));
  }
  if (sequence_parallel && r.chance(0.5)) set("parallel.tp_overlap", "true");
  // The attention kernel: auto (flash on Hopper and newer), or either one explicitly where the device
  // profile has the fused kernel's efficiencies (not the V100 of the DGX-2H).
  std::string attention = r.pick<std::string>({"auto", "auto", "unfused", "flash"});
  if (attention == "flash" && c.topology.find("dgx2h") != std::string::npos) attention = "unfused";
  if (attention != "auto") set("training.attention", attention);
  return c;
}

inline Case transformer_on_wafers(Rng& r) {
  Case c;
  c.family = "transformer_lm/wafer_cluster";
  c.topology = r.pick<std::string>({"topologies/cerebras-cs2-cluster.yaml", "topologies/cerebras-cs1.yaml"});
  c.workload = "workloads/gpt2-small.yaml";
  int systems = r.pick<int>({1, 1, 2, 4});
  c.sets.push_back("topology.systems=" + std::to_string(systems));
  int hidden = r.pick<int>({256, 512, 768});
  auto set = [&](const std::string& k, const std::string& v) { c.sets.push_back("workload." + k + "=" + v); };
  set("model.layers", std::to_string(r.pick<int>({2, 4, 12})));
  set("model.hidden", std::to_string(hidden));
  set("model.heads", std::to_string(hidden / 64));
  set("model.ffn_hidden", std::to_string(4 * hidden));
  set("model.seq_len", std::to_string(r.pick<int>({256, 512, 1024})));
  set("model.vocab", std::to_string(r.pick<int>({8192, 50257})));
  int per_system = r.pick<int>({4, 8, 16, 32});
  set("training.global_batch", std::to_string(systems * per_system));
  if (r.chance(0.4)) set("training.micro_batch", std::to_string(r.pick<int>({1, 2, 4})));
  set("training.execution_mode", r.pick<std::string>({"auto", "layer_pipelined", "weight_streaming"}));
  set("training.recompute", r.pick<std::string>({"none", "selective", "full"}));
  set("training.precision", r.pick<std::string>({"fp16", "bf16"}));
  return c;
}

inline Case gshard(Rng& r) {
  Case c;
  c.family = "gshard_moe";
  int which = r.below(6);
  c.workload = "workloads/gshard-moe.yaml";
  if (which == 0 || which == 1) {
    c.topology = "topologies/tpu-v3-pod.yaml";
    c.sets.push_back(std::string("topology.dims=") + (which == 0 ? "[2,2]" : "[4,4]"));
  } else if (which == 2) {
    c.topology = "topologies/tpu-v4-pod.yaml";
    c.sets.push_back("topology.dims=[4,4,4]");
  } else if (which == 3 || which == 4) {
    c.topology =
        r.pick<std::string>({"topologies/dgx-a100-superpod.yaml", "topologies/dgx-h100-superpod.yaml"});
    c.sets.push_back("topology.nodes=" + std::to_string(r.pick<int>({1, 2})));
  } else {
    c.topology = "topologies/cerebras-cs2-cluster.yaml";
    c.sets.push_back("topology.systems=" + std::to_string(r.pick<int>({2, 4, 16})));
  }
  c.family += "/" + c.topology.substr(11);
  int devices = compute_devices(c.topology, c.sets);
  int seq = r.pick<int>({128, 256});
  auto set = [&](const std::string& k, const std::string& v) { c.sets.push_back("workload." + k + "=" + v); };
  set("model.layers", std::to_string(r.pick<int>({4, 8})));  // encoder + decoder, an MoE layer in each
  set("model.hidden", std::to_string(r.pick<int>({256, 512})));
  set("model.heads", "8");
  set("model.ffn_hidden", std::to_string(r.pick<int>({1024, 2048})));
  set("model.seq_len", std::to_string(seq));
  set("model.vocab", "8192");
  set("model.experts", std::to_string(std::max(1, devices * r.pick<int>({1, 1, 2}) / r.pick<int>({1, 2}))));
  set("model.top_k", std::to_string(r.pick<int>({1, 2})));
  set("model.capacity_factor", num(r.pick<double>({0.5, 1.0, 1.25, 2.0})));
  set("training.batch_tokens", std::to_string(seq * devices * r.pick<int>({1, 2, 4})));
  set("training.rematerialization", r.chance(0.5) ? "true" : "false");
  set("training.precision", r.pick<std::string>({"bf16", "bf16", "fp32"}));
  set("training.optimizer", r.pick<std::string>({"adafactor", "adam"}));
  return c;
}

inline Case parameter_server(Rng& r) {
  Case c;
  c.family = "ctr_sparse_ps";
  c.workload = "workloads/ctr-sparse-ps.yaml";
  int which = r.below(5);
  if (which <= 2) {
    c.topology = "topologies/gpu-ps-4node.yaml";
    c.sets.push_back("topology.nodes=" + std::to_string(r.pick<int>({1, 2, 4})));
  } else {
    c.topology = "topologies/cpu-mpi-cluster.yaml";
    c.sets.push_back("topology.nodes=" + std::to_string(r.pick<int>({2, 4, 8, 16})));
  }
  c.family += "/" + c.topology.substr(11);
  auto set = [&](const std::string& k, const std::string& v) { c.sets.push_back("workload." + k + "=" + v); };
  set("model.embedding.features", num(r.pick<double>({1e8, 1e9, 1e10, 1e11})));
  set("model.embedding.dimension", std::to_string(r.pick<int>({8, 16})));
  set("model.slots", std::to_string(r.pick<int>({10, 100})));
  set("model.nonzeros_per_example", std::to_string(r.pick<int>({100, 500})));
  set("model.zipf_exponent", num(r.pick<double>({0.8, 1.1, 1.3})));
  set("training.batch_per_gpu", std::to_string(r.pick<int>({512, 4096})));
  set("training.batch_per_cpu_node", std::to_string(r.pick<int>({512, 4096})));
  set("training.minibatches_per_batch", r.pick<std::string>({"auto", "1", "2", "4"}));
  set("ps.dram_cache_GiB", std::to_string(r.pick<int>({64, 512})));
  set("ps.pipeline", r.chance(0.5) ? "true" : "false");
  return c;
}

inline Case draw_case(std::uint64_t seed) {
  Rng r(seed);
  switch (seed % 4) {  // every kind equally often
    case 0: return transformer_on_gpus(r);
    case 1: return transformer_on_wafers(r);
    case 2: return gshard(r);
    default: return parameter_server(r);
  }
}

}  // namespace podsim::testing
