#include "podsim/workload/wafer/cerebras_config.hpp"

#include <fmt/format.h>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/network/collective_registry.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/bounded_reads.hpp"
#include "podsim/workload/transformer/model_checks.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {
namespace {

bool from_command_line(const ConfigNode& node, const char* key) {
  return node.where(key).rfind("--set", 0) == 0;
}

// Reads every parallel.* key (types are still checked) and decides per key: default -> nothing,
// command line -> error, file -> ignored and noted.
void read_parallel(const ConfigNode& par, int systems, CerebrasWorkload& out) {
  const std::string why =
      "Cerebras wafer clusters train with data parallelism across systems only; a model is never split "
      "over systems or over the wafer by tensor or pipeline parallelism (layers are placed on the wafer by "
      "the execution mode, training.execution_mode)";
  auto check = [&](const char* key, bool is_default, const std::string& shown) {
    if (is_default) return;
    if (from_command_line(par, key)) par.fail(key, fmt::format("{} does not apply: {}", key, why));
    out.ignored_parallel.push_back(fmt::format("{}={}", key, shown));
  };
  long long tp = par.positive_integer_or("tp", 1), pp = par.positive_integer_or("pp", 1);
  check("tp", tp == 1, std::to_string(tp));
  check("pp", pp == 1, std::to_string(pp));
  long long dp = par.positive_integer_or_auto("dp", 0);
  if (dp != 0 && dp != systems && from_command_line(par, "dp"))
    par.fail("dp", fmt::format("on a wafer cluster dp is the number of CS-2 systems ({}); change it with "
                               "--set topology.systems=N (1..192) or use dp=auto",
                               systems));
  if (dp != 0 && dp != systems) out.ignored_parallel.push_back(fmt::format("dp={}", dp));
  Schedule schedule =
      choice_or(par, "schedule", kScheduleNames,
                {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved}, Schedule::one_f_one_b);
  check("schedule", schedule == Schedule::one_f_one_b, to_string(schedule));
  long long v = par.positive_integer_or_auto("virtual_stages", 1);
  check("virtual_stages", v == 1, v == 0 ? "auto" : std::to_string(v));
  bool sp = par.boolean_or("sequence_parallel", false);
  check("sequence_parallel", !sp, "true");
  long long zero = par.integer_or("zero", 0);
  check("zero", zero == 0, std::to_string(zero));
  bool sg = par.boolean_or("scatter_gather", true);
  check("scatter_gather", sg, "false");
  bool overlap = par.boolean_or("dp_overlap", true);
  check("dp_overlap", overlap, "false");
  double bucket = par.positive_or("dp_bucket_MB", 25);
  check("dp_bucket_MB", bucket == 25, fmt::format("{}", bucket));
  std::string algo =
      par.choice_or("dp_algorithm", network::algorithm_names(network::CollectiveKind::all_reduce),
                    network::to_string(network::Algorithm::ring));
  check("dp_algorithm", algo == network::to_string(network::Algorithm::ring), algo);
  long long cp = par.positive_integer_or("cp", 1);
  check("cp", cp == 1, std::to_string(cp));
  CpAlgorithm cp_algorithm = choice_or(par, "cp_algorithm", kCpAlgorithmNames, CpAlgorithm::ring);
  check("cp_algorithm", cp_algorithm == CpAlgorithm::ring, to_string(cp_algorithm));
  bool tp_overlap = par.boolean_or("tp_overlap", false);
  check("tp_overlap", !tp_overlap, "true");
  par.reject_unknown_keys();
}

}  // namespace

const char* to_string(ExecutionMode m) {
  return kExecutionModeNames.name(m);
}

CerebrasWorkload read_cerebras_workload(const ConfigNode& root, const topology::Topology& topo) {
  if (!topology::is_family<topology::WaferClusterSpec>(topo))
    throw std::logic_error("read_cerebras_workload needs a wafer_cluster topology");
  const int systems = topo.family<topology::WaferClusterSpec>()->systems;
  CerebrasWorkload out;
  WorkloadConfig& w = out.w;
  w.name = read_document_name(root);
  ConfigNode model = root.child("model");
  w.model = read_model_section(model, w.name);
  require_gpt_layer(w.model, model, "Cerebras");
  if (w.model.hidden % w.model.heads)
    model.fail("hidden",
               fmt::format("hidden {} is not divisible by heads {}", w.model.hidden, w.model.heads));

  if (root.has("parallel")) read_parallel(root.child("parallel"), systems, out);
  w.parallel.tp = w.parallel.pp = 1;
  w.parallel.dp = systems;
  w.parallel.schedule = Schedule::one_f_one_b;

  ConfigNode train = root.child("training");
  w.training.global_batch = train.positive_integer("global_batch");
  // The micro-batch (gradient accumulation) is the Cerebras runtime's choice unless given on the command
  // line: a number in the file is the GPU plan's micro-batch, noted and not applied.
  int mb = int_in_or_auto(train, "micro_batch", 1, 1 << 30, 0);
  if (mb != 0 && !from_command_line(train, "micro_batch")) {
    out.ignored_parallel.push_back(fmt::format("training.micro_batch={}", mb));
    mb = 0;
  }
  w.training.micro_batch_auto = mb == 0;
  w.training.micro_batch = mb;
  w.training.precision = read_precision(train);
  check_precision_on_device(train, w.training.precision, topo.device, topo.source_file);
  w.training.recompute = read_recompute(train);
  w.training.grad_reduce_bytes = read_grad_reduce_bytes(train, w.training.precision);
  read_grad_accumulation(train);  // checked, not applied: GPU-only, MemoryX accumulates
  w.training.optimizer = read_optimizer_state(train, w.training.precision);  // the wafer's Adam state
  out.mode = choice_or(train, "execution_mode", kExecutionModeNames, ExecutionMode::auto_select);
  train.reject_unknown_keys();

  if (w.training.global_batch % systems)
    train.fail("global_batch", fmt::format("global_batch={} is not divisible by the {} CS-2 systems (data "
                                           "parallel: every system runs the same share of the batch)",
                                           w.training.global_batch, systems));
  long long per_system = w.training.global_batch / systems;
  if (!w.training.micro_batch_auto && per_system % w.training.micro_batch)
    train.fail("micro_batch",
               fmt::format("{} sequences per system (global_batch/systems) is not divisible by "
                           "micro_batch={}",
                           per_system, w.training.micro_batch));
  return out;
}

std::vector<std::pair<std::string, std::string>> cerebras_settings(const CerebrasWorkload& cw,
                                                                   ExecutionMode mode, int micro_batch) {
  const WorkloadConfig& w = cw.w;
  long long per_system = w.training.global_batch / w.parallel.dp;
  return {{"model_params_billion", fmt::format("{:.5g}", total_params(w.model) / 1e9)},
          {"tp", "1"},
          {"pp", "1"},
          {"dp", std::to_string(w.parallel.dp)},
          {"micro_batch", std::to_string(micro_batch)},
          {"global_batch", std::to_string(w.training.global_batch)},
          {"microbatches", std::to_string(per_system / micro_batch)},
          {"recompute", to_string(w.training.recompute)},
          {"precision", topology::to_string(w.training.precision)},
          {"systems", std::to_string(w.parallel.dp)},
          {"execution_mode", to_string(mode)}};
}

std::string ignored_plan_note(const CerebrasWorkload& cw) {
  if (cw.ignored_parallel.empty()) return "";
  std::string keys;
  for (const auto& k : cw.ignored_parallel) keys += (keys.empty() ? "" : ", ") + k;
  return fmt::format(
      "not applied on a wafer cluster: the workload file's GPU plan ({}); Cerebras runs data parallel across "
      "systems, and the micro-batch is the runtime's unless given with --set",
      keys);
}

}  // namespace podsim::workload
