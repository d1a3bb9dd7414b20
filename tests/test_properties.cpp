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
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/report/invariants.hpp"
#include "podsim/topology/loader.hpp"
#include "property_cases.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::Case;
using podsim::testing::draw_case;
using podsim::testing::source_path;

namespace {

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
      fail(fmt::format(
          "compute at peak: lanes compute {:.6g} s on average, but their FLOPs take {:.6g} s at peak "
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
    // With flash attention (the default on Hopper and newer) MFU counts causal attention: s/6h -> s/12h.
    bool flash = r.plan.description.find("flash attention") != std::string::npos;
    double model = 72 * B * s * L * h * h * (1 + s / ((flash ? 12 : 6) * h)) + 6 * B * s * h * V;
    if (relative_gap(r.plan.model_flops, model) > 1e-9)
      fail(fmt::format("model flops: plan {:.6g}, Megatron's formula {:.6g}", r.plan.model_flops, model));
    if (r.plan.samples_per_step != B)
      fail(fmt::format("batch: {} samples per step, global_batch {}", r.plan.samples_per_step, B));
    int tp = std::stoi(c.get("workload.parallel.tp"));
    int mp = tp * pp * (c.get("workload.parallel.cp").empty() ? 1 : std::stoi(c.get("workload.parallel.cp")));
    std::string dp = c.get("workload.parallel.dp");
    int expect = dp == "auto" ? topo.compute_device_count() / mp * mp : mp * std::stoi(dp);
    if (r.devices() != expect)
      fail(fmt::format("devices: {} used, tp x cp x pp x dp = {}", r.devices(), expect));
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
      fail(fmt::format(
          "batch: {:.9g} examples per batch, servers x GPUs x batch_per_gpu x minibatches = {:.9g}",
          r.plan.samples_per_step, expect));
  } else if (c.family == "ctr_sparse_ps/cpu-mpi-cluster.yaml") {
    double expect = std::stod(c.get("topology.nodes")) *
                    std::stod(c.get("workload.training.batch_per_cpu_node")) *
                    std::stod(r.setting("minibatches_per_batch"));
    if (relative_gap(r.plan.samples_per_step, expect) > 1e-12)
      fail(
          fmt::format("batch: {:.9g} examples per batch, servers x batch_per_cpu_node x minibatches = {:.9g}",
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
    driver::RunRequest request{source_path(c.topology), source_path(c.workload), c.sets};
    std::vector<std::pair<std::string, std::string>> topo_sets, work_sets;
    driver::split_sets(c.sets, topo_sets, work_sets);
    topo = topology::load_topology(request.topology_file, topo_sets);
    auto r = driver::simulate(request);
    if (!r.ok()) {
      out.verdict = Verdict::infeasible;
      if (r.status_detail.empty())
        out.problems.push_back("property status: " + r.status + " without a reason");
      // Out of memory on a GPU or wafer means some lane does not fit in device memory.
      bool over = false;
      for (const auto& m : r.plan.memory) over = over || m.total() > topo.device.hbm_bytes;
      if (r.status == "out_of_memory" && c.family.rfind("ctr_sparse_ps", 0) != 0 && !over)
        out.problems.push_back(fmt::format(
            "property out of memory: every lane fits ({:.3f} GiB of {:.3f} GiB): {}",
            r.memory_per_device() / (1 << 30), topo.device.hbm_bytes / (1 << 30), r.status_detail));
    } else {
      if (c.sets.size() % 8 == 0) {  // determinism, on a share of the cases
        auto again = driver::simulate(request);
        if (again.step_time() != r.step_time() || again.memory_per_device() != r.memory_per_device())
          out.problems.push_back(fmt::format("property deterministic: step {:.17g} then {:.17g} s",
                                             r.step_time(), again.step_time()));
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
