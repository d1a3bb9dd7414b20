// Property-based test: random *valid* configurations of every workload kind on every topology family and
// preset, simulated in process; every result must pass the product's invariant checks (simulate() runs
// them and throws InvariantViolation) and the independent re-derivations below, which recompute what they
// can from the inputs the test chose rather than from the plan (peak from the topology file, FLOPs from
// the model's shape, devices and batch from the settings the test set).
//
// Deterministic: case i uses seed PODSIM_PROPERTY_SEED_BASE + i (default base 1) for i <
// PODSIM_PROPERTY_CASES (default 240); PODSIM_PROPERTY_SEED=N runs that one seed. Every seed or
// configuration that ever failed is kept in tests/data/property-regressions.txt and replayed first.
// scripts/soak.sh runs this for hours with fresh seed bases.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "known_defects.hpp"
#include "podsim/cli/simulation.hpp"
#include "podsim/core/error.hpp"
#include "podsim/report/invariants.hpp"
#include "podsim/topology/loader.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::source_path;

namespace {

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

int compute_devices(const std::string& topology, const std::vector<std::string>& topo_sets) {
  topology::Overrides o;
  for (const auto& s : topo_sets) {
    auto eq = s.find('=');
    o.emplace_back(s.substr(9, eq - 9), s.substr(eq + 1));  // strip "topology."
  }
  return topology::load_topology(source_path(topology), o).compute_device_count();
}

// Mostly a precision the device has a peak for (the rest exercise the error path).
std::string precision_of(Rng& r, const std::string& topology, const std::vector<std::string>& choices) {
  auto topo = topology::load_topology(source_path(topology), {});
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string p = r.pick(choices);
    if (topo.device.peak_flops.count(topology::parse_precision(p)) || r.chance(0.05)) return p;
  }
  return r.pick(choices);
}

std::string num(double v) {
  return fmt::format("{:g}", v);
}

Case transformer_on_gpus(Rng& r) {
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
  set("parallel.sequence_parallel", r.chance(0.3) ? "true" : "false");
  set("parallel.dp_overlap", r.chance(0.5) ? "true" : "false");
  set("parallel.dp_algorithm", r.pick<std::string>({"ring", "tree", "hierarchical"}));
  set("training.global_batch", std::to_string(dp * mb * microbatches));
  set("training.micro_batch", micro_batch);
  set("training.recompute", r.pick<std::string>({"none", "selective", "full"}));
  set("training.precision", precision_of(r, c.topology, {"fp16", "fp16", "bf16", "fp32", "tf32", "fp8"}));
  return c;
}

Case transformer_on_wafers(Rng& r) {
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

Case gshard(Rng& r) {
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

Case parameter_server(Rng& r) {
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

Case draw_case(std::uint64_t seed) {
  Rng r(seed);
  switch (seed % 4) {  // every kind equally often
    case 0: return transformer_on_gpus(r);
    case 1: return transformer_on_wafers(r);
    case 2: return gshard(r);
    default: return parameter_server(r);
  }
}

enum class Verdict { ok, infeasible, input_error, violation };

struct Outcome {
  Verdict verdict = Verdict::ok;
  std::vector<std::string> problems;  // "invariant ..." (product) or "property ..." (this test)
  std::string error;
};

double relative_gap(double a, double b) {
  return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300});
}

// The independent re-derivations: from the inputs the test chose, not from the plan.
void check_properties(const Case& c, const report::RunResult& r, const topology::Topology& topo,
                      std::vector<std::string>& problems) {
  auto fail = [&](const std::string& what) { problems.push_back("property " + what); };
  double step = r.step_time();
  std::string precision = r.setting("precision");
  if (!precision.empty()) {
    double peak = topo.device.peak(topology::parse_precision(precision));  // the datasheet, from the file
    double at_peak = r.plan.hardware_flops / r.devices() / peak;
    if (at_peak > step * (1 + 1e-6))
      fail(fmt::format("flops at peak: {:.6g} s of FLOPs at the {} datasheet peak {:.6g}, step {:.6g} s",
                       at_peak, precision, peak, step));
    if (r.mfu() > r.hfu() * (1 + 1e-9) || r.hfu() > 1 + 1e-6)
      fail(fmt::format("mfu <= hfu <= 1: MFU {:.4f} HFU {:.4f}", r.mfu(), r.hfu()));
  }
  for (const auto& lane : r.stages) {
    double sum = lane.idle;
    for (double s : lane.seconds) sum += s;
    if (relative_gap(sum, step) > 1e-6)
      fail(fmt::format("breakdown: lane {} adds up to {:.9g} s of a {:.9g} s step", lane.stage, sum, step));
  }
  if (r.devices() > topo.compute_device_count() || r.devices() <= 0)
    fail(fmt::format("devices: {} used of {} compute devices", r.devices(), topo.compute_device_count()));
  for (const auto& m : r.plan.memory)
    if (m.total() > topo.device.hbm_bytes * (1 + 1e-9))
      fail(fmt::format("memory: a lane needs {:.3f} GiB of {:.3f} GiB and the status is ok",
                       m.total() / (1 << 30), topo.device.hbm_bytes / (1 << 30)));

  // Compute at peak: the mean lane's kernel time cannot be less than its share of the executed FLOPs at
  // the datasheet peak (stronger than HFU <= 1, which also counts communication and idle time).
  if (!precision.empty() && !r.stages.empty()) {
    double peak = topo.device.peak(topology::parse_precision(precision));
    double compute = r.mean[workload::Category::compute];
    double at_peak = r.plan.hardware_flops / r.devices() / peak;
    if (at_peak > compute * (1 + 1e-6) + 1e-12)
      fail(fmt::format("compute at peak: lanes compute {:.6g} s on average, but their FLOPs take {:.6g} s at peak "
                       "(HFU of the compute alone {:.4f})",
                       compute, at_peak, at_peak / compute));
  }
  if (c.family.rfind("transformer_lm", 0) == 0 || c.family.rfind("gshard_moe", 0) == 0) {
    double seq = std::stod(c.get("workload.model.seq_len"));
    if (relative_gap(r.plan.tokens_per_step, r.plan.samples_per_step * seq) > 1e-12)
      fail(fmt::format("tokens: {:.9g} tokens per step for {:.9g} sequences of {}", r.plan.tokens_per_step,
                       r.plan.samples_per_step, seq));
  }
  if (c.family == "transformer_lm/gpu_cluster") {
    int pp = std::stoi(c.get("workload.parallel.pp"));
    if (static_cast<int>(r.stages.size()) != pp)
      fail(fmt::format("lanes: {} lanes accounted for pp={}", r.stages.size(), pp));
    // Megatron's FLOP count (Narayanan et al. 2021, Sec. 5.1) for ffn = 4h without recomputation:
    // 72 B s L h^2 (1 + s/6h) + 6 B s h V.
    double B = std::stod(c.get("workload.training.global_batch")),
           s = std::stod(c.get("workload.model.seq_len"));
    double L = std::stod(c.get("workload.model.layers")), h = std::stod(c.get("workload.model.hidden"));
    double V = std::stod(c.get("workload.model.vocab"));
    double model = 72 * B * s * L * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
    if (relative_gap(r.plan.model_flops, model) > 1e-9)
      fail(fmt::format("model flops: plan {:.6g}, Megatron's formula {:.6g}", r.plan.model_flops, model));
    if (r.plan.samples_per_step != B)
      fail(fmt::format("batch: {} samples per step, global_batch {}", r.plan.samples_per_step, B));
    int tp = std::stoi(c.get("workload.parallel.tp"));
    std::string dp = c.get("workload.parallel.dp");
    int expect = dp == "auto" ? topo.compute_device_count() / (tp * pp) * tp * pp : tp * pp * std::stoi(dp);
    if (r.devices() != expect) fail(fmt::format("devices: {} used, tp x pp x dp = {}", r.devices(), expect));
    // A schedule without interleaving runs one model chunk per stage.
    if (c.get("workload.parallel.schedule") != "interleaved" && r.setting("virtual_stages") != "1")
      fail(fmt::format("virtual stages: schedule {} ran with virtual_stages={}",
                       c.get("workload.parallel.schedule"), r.setting("virtual_stages")));
  } else if (c.family == "transformer_lm/wafer_cluster") {
    int systems = std::stoi(c.get("topology.systems"));
    if (r.devices() != systems) fail(fmt::format("devices: {} used on {} systems", r.devices(), systems));
    double B = std::stod(c.get("workload.training.global_batch"));
    if (r.plan.samples_per_step != B)
      fail(fmt::format("batch: {} samples per step, global_batch {}", r.plan.samples_per_step, B));
    std::string mode = c.get("workload.training.execution_mode");
    if (mode != "auto" && r.setting("execution_mode") != mode)
      fail(fmt::format("execution mode: asked {}, ran {}", mode, r.setting("execution_mode")));
  } else if (c.family == "ctr_sparse_ps/gpu-ps-4node.yaml") {
    // Examples per batch = servers x 8 GPUs x examples per GPU per mini-batch x mini-batches.
    double expect = std::stod(c.get("topology.nodes")) * topo.devices_per_node *
                    std::stod(c.get("workload.training.batch_per_gpu")) *
                    std::stod(r.setting("minibatches_per_batch"));
    if (relative_gap(r.plan.samples_per_step, expect) > 1e-12)
      fail(fmt::format("batch: {:.9g} examples per batch, servers x GPUs x batch_per_gpu x minibatches = {:.9g}",
                       r.plan.samples_per_step, expect));
  } else if (c.family == "ctr_sparse_ps/cpu-mpi-cluster.yaml") {
    double expect = std::stod(c.get("topology.nodes")) * std::stod(c.get("workload.training.batch_per_cpu_node")) *
                    std::stod(r.setting("minibatches_per_batch"));
    if (relative_gap(r.plan.samples_per_step, expect) > 1e-12)
      fail(fmt::format("batch: {:.9g} examples per batch, servers x batch_per_cpu_node x minibatches = {:.9g}",
                       r.plan.samples_per_step, expect));
  } else if (c.family.rfind("gshard_moe", 0) == 0) {
    double tokens = std::stod(c.get("workload.training.batch_tokens"));
    if (relative_gap(r.plan.tokens_per_step, tokens) > 1e-12)
      fail(fmt::format("batch: {} tokens per step, batch_tokens {}", r.plan.tokens_per_step, tokens));
    if (r.devices() != topo.compute_device_count())
      fail(fmt::format("devices: parallel.devices auto used {} of {} compute devices", r.devices(),
                       topo.compute_device_count()));
  }
}

Outcome run_case(const Case& c) {
  Outcome out;
  topology::Topology topo;
  try {
    cli::RunRequest request{source_path(c.topology), source_path(c.workload), c.sets};
    std::vector<std::pair<std::string, std::string>> topo_sets, work_sets;
    cli::split_sets(c.sets, topo_sets, work_sets);
    topo = topology::load_topology(request.topology_file, topo_sets);
    auto r = cli::simulate(request);
    if (!r.ok()) {
      out.verdict = Verdict::infeasible;
      if (r.status_detail.empty())
        out.problems.push_back("property status: " + r.status + " without a reason");
      // Out of memory on a GPU or wafer means some lane does not fit in device memory.
      bool over = false;
      for (const auto& m : r.plan.memory) over = over || m.total() > topo.device.hbm_bytes;
      if (r.status == "out_of_memory" && c.family.rfind("ctr_sparse_ps", 0) != 0 && !over)
        out.problems.push_back(fmt::format("property out of memory: every lane fits ({:.3f} GiB of {:.3f} GiB): {}",
                                           r.memory_per_device() / (1 << 30), topo.device.hbm_bytes / (1 << 30),
                                           r.status_detail));
    } else {
      if (c.sets.size() % 8 == 0) {  // determinism, on a share of the cases
        auto again = cli::simulate(request);
        if (again.step_time() != r.step_time() || again.memory_per_device() != r.memory_per_device())
          out.problems.push_back(fmt::format("property deterministic: step {:.17g} then {:.17g} s", r.step_time(),
                                             again.step_time()));
      }
      for (const auto& v : report::invariant_violations(r, topo)) out.problems.push_back("invariant " + v);
      check_properties(c, r, topo, out.problems);
    }
  } catch (const InputError& e) {
    out.verdict = Verdict::input_error;
    out.error = e.what();
  } catch (const InfeasibleConfig& e) {
    out.verdict = Verdict::infeasible;
    out.error = e.what();
  } catch (const InvariantViolation& e) {
    out.problems.push_back(e.what());  // the product's own check ("invariant hfu: ...")
  } catch (const std::exception& e) {
    out.problems.push_back(std::string("crash: ") + e.what());  // an internal error is a bug too
  }
  if (!out.problems.empty()) out.verdict = Verdict::violation;
  return out;
}

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

struct Tally {
  int ok = 0, infeasible = 0, input_error = 0, known = 0, failed = 0;
  std::map<std::string, int> ok_by_family, known_by_defect;
};

// Runs one case and records it; returns false when it found a new violation.
bool run_and_record(const Case& c, const std::string& origin, Tally& t) {
  Outcome o = run_case(c);
  switch (o.verdict) {
    case Verdict::ok: ++t.ok, ++t.ok_by_family[c.family]; return true;
    case Verdict::infeasible: ++t.infeasible; return true;
    case Verdict::input_error:
      ++t.input_error;
      if (env_long("PODSIM_PROPERTY_VERBOSE", 0)) fmt::print("[invalid input] {}: {}\n", origin, o.error);
      return true;
    case Verdict::violation: break;
  }
  std::string text;
  for (const auto& p : o.problems) text += p + "\n";
  std::string defect = podsim::testing::known_defect(c.repro(), text);
  if (!defect.empty()) {
    ++t.known, ++t.known_by_defect[defect];
    fmt::print("[known defect: {}] {}\n  repro: {}\n", defect, origin, c.repro());
    if (env_long("PODSIM_PROPERTY_VERBOSE", 0)) fmt::print("{}", text);
    return true;
  }
  ++t.failed;
  ADD_FAILURE() << origin << " violates:\n"
                << text << "  repro: " << c.repro()
                << "\n  replay: PODSIM_PROPERTY_SEED=" << origin.substr(origin.find(' ') + 1)
                << " build/tests/podsim_tests --gtest_filter='Properties.*'";
  fmt::print("PROPERTY-FAILURE {}\n  repro: {}\n", origin, c.repro());
  return false;
}

// tests/data/property-regressions.txt: "seed N" or "case TOPOLOGY WORKLOAD SET..." per line, # comments.
std::vector<std::pair<std::string, Case>> regressions() {
  std::vector<std::pair<std::string, Case>> out;
  std::ifstream in(source_path("tests/data/property-regressions.txt"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string kind;
    if (!(words >> kind)) continue;
    if (kind == "seed") {
      std::uint64_t seed;
      words >> seed;
      out.emplace_back(fmt::format("seed {}", seed), draw_case(seed));
    } else if (kind == "case") {
      Case c;
      c.family = "regression";
      words >> c.topology >> c.workload;
      for (std::string s; words >> s;) c.sets.push_back(s);
      if (c.workload.find("gpt") != std::string::npos && c.topology.find("cerebras") != std::string::npos)
        c.family = "transformer_lm/wafer_cluster";
      out.emplace_back("regression " + c.repro(), c);
    }
  }
  return out;
}

}  // namespace

TEST(Properties, TheGeneratorIsDeterministicAndCoversEveryKind) {
  EXPECT_EQ(draw_case(7).repro(), draw_case(7).repro());
  std::set<std::string> families;
  for (std::uint64_t s = 0; s < 200; ++s) families.insert(draw_case(s).family);
  for (const char* f : {"transformer_lm/gpu_cluster", "transformer_lm/wafer_cluster",
                        "gshard_moe/tpu-v3-pod.yaml", "gshard_moe/tpu-v4-pod.yaml",
                        "gshard_moe/dgx-a100-superpod.yaml", "gshard_moe/cerebras-cs2-cluster.yaml",
                        "ctr_sparse_ps/gpu-ps-4node.yaml", "ctr_sparse_ps/cpu-mpi-cluster.yaml"})
    EXPECT_TRUE(families.count(f)) << f;
}

TEST(Properties, RegressionsStillHold) {
  Tally t;
  for (const auto& [origin, c] : regressions()) run_and_record(c, origin, t);
  EXPECT_EQ(t.failed, 0);
}

TEST(Properties, RandomValidConfigurationsArePhysicallyPossible) {
  long one = env_long("PODSIM_PROPERTY_SEED", -1);
  long base = one >= 0 ? one : env_long("PODSIM_PROPERTY_SEED_BASE", 1);
  long cases = one >= 0 ? 1 : env_long("PODSIM_PROPERTY_CASES", 240);
  auto started = std::chrono::steady_clock::now();
  Tally t;
  for (long i = 0; i < cases; ++i) {
    std::uint64_t seed = static_cast<std::uint64_t>(base + i);
    run_and_record(draw_case(seed), fmt::format("seed {}", seed), t);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "properties: {} cases from seed {} in {:.1f} s: {} ok, {} infeasible, {} invalid input, {} known "
      "defects, {} new violations\n",
      cases, base, seconds, t.ok, t.infeasible, t.input_error, t.known, t.failed);
  for (const auto& [f, n] : t.ok_by_family) fmt::print("  ok {:4d}  {}\n", n, f);
  for (const auto& [d, n] : t.known_by_defect) fmt::print("  known {:4d}  {}\n", n, d);
  // Not vacuous: most drawn configurations are valid and run, and every kind runs somewhere.
  if (cases >= 40) {
    EXPECT_GE(t.ok + t.known, cases / 2) << "the generator draws too many invalid configurations";
    for (const char* kind : {"transformer_lm/gpu_cluster", "transformer_lm/wafer_cluster", "ctr_sparse_ps"}) {
      int n = 0;
      for (const auto& [f, k] : t.ok_by_family) n += f.rfind(kind, 0) == 0 ? k : 0;
      EXPECT_GT(n, 0) << kind << " never ran";
    }
  }
}
