// The searchable keys of a transformer_lm workload (plan_space.hpp): what `auto` expands to, how a value
// sets the WorkloadConfig, what it needs to divide, and which values repeat another. Adding a parallelism
// is one more entry of kSearchKeys.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "podsim/driver/plan_space.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {
namespace {

using workload::MoeDispatcher;
using workload::RankOrder;
using workload::Recompute;
using workload::Schedule;
using workload::WorkloadConfig;
using Values = std::vector<long long>;

long long model_parallel(const WorkloadConfig& w) {
  return static_cast<long long>(w.parallel.tp) * w.parallel.cp * w.parallel.pp;
}
// Ranks a gradient is reduced over: with one, ZeRO and the overlapped reduction change nothing.
long long grad_ranks(const WorkloadConfig& w) {
  return static_cast<long long>(w.parallel.dp) * w.parallel.cp;
}

Values powers_of_two(long long from, long long up_to) {
  Values v;
  for (long long x = from; x <= up_to; x *= 2) v.push_back(x);
  return v;
}

std::string number(long long v) {
  return std::to_string(v);
}
std::string boolean(long long v) {
  return v ? "true" : "false";
}

long long parse_int(const ConfigNode& section, const std::string& key, const YAML::Node& value,
                    long long lo) {
  long long v = 0;
  try {
    v = value.as<long long>();
  } catch (const YAML::Exception&) {
    section.fail(key, fmt::format("'{}' is not an integer; a list of {} values must hold integers",
                                  value.IsScalar() ? value.Scalar() : "a non-scalar", key));
  }
  if (v < lo) section.fail(key, fmt::format("{} is below {}, the smallest valid {}", v, lo, key));
  return v;
}
long long parse_positive(const ConfigNode& s, const std::string& k, const YAML::Node& v) {
  return parse_int(s, k, v, 1);
}
long long parse_count(const ConfigNode& s, const std::string& k, const YAML::Node& v) {
  return parse_int(s, k, v, 0);
}
long long parse_zero(const ConfigNode& s, const std::string& k, const YAML::Node& v) {
  long long z = parse_int(s, k, v, 0);
  if (z > 3) s.fail(k, fmt::format("ZeRO stage must be 0, 1, 2 or 3, got {}", z));
  return z;
}
long long parse_bool(const ConfigNode& s, const std::string& k, const YAML::Node& v) {
  std::string t = v.IsScalar() ? v.Scalar() : "";
  if (t == "true") return 1;
  if (t == "false") return 0;
  s.fail(k, fmt::format("'{}' is not true or false", t));
}

long long dispatcher(MoeDispatcher d) {
  return static_cast<long long>(d);
}

// The label and the parser of a key whose values are an enum's names (core/names.hpp table `names`).
template <const auto& names>
std::string choice_name(long long v) {
  using E = typename decltype(names.parse(std::string_view{}))::value_type;
  return names.name(static_cast<E>(v));
}
template <const auto& names>
long long parse_choice(const ConfigNode& s, const std::string& k, const YAML::Node& v) {
  std::string text = v.IsScalar() ? v.Scalar() : "";
  auto value = names.parse(text);
  if (!value) s.fail(k, fmt::format("'{}' is not one of {}", text, names.valid_list()));
  return static_cast<long long>(*value);
}

bool never(const WorkloadConfig&, const SpaceContext&, long long) {
  return false;
}
const char* fine(const WorkloadConfig&, const SpaceContext&) {
  return nullptr;
}

const char* check_devices(const WorkloadConfig& w, const SpaceContext& c) {
  long long d = model_parallel(w) * std::max(1, w.parallel.dp);
  return d > c.devices || w.parallel.dp < 1 ? "needs more devices than the topology has" : nullptr;
}
const char* check_tp(const WorkloadConfig& w, const SpaceContext& c) {
  const auto& m = w.model;
  long long t = w.parallel.tp;
  if (m.heads % t || m.query_groups() % t || m.ffn_hidden % t || m.vocab % t)
    return "tp does not divide heads, kv_heads, ffn_hidden or vocab";
  return check_devices(w, c);
}
const char* check_cp(const WorkloadConfig& w, const SpaceContext& c) {
  // Causal load balancing splits each sequence into 2*cp chunks.
  if (w.parallel.cp > 1 && w.model.seq_len % (2LL * w.parallel.cp)) return "2*cp does not divide seq_len";
  return check_devices(w, c);
}
// parallel.pipeline_layout: the pp that divide some layout's chunk count (and pp 1, which places no layout).
bool pp_fits_a_layout(const WorkloadConfig& w, long long pp) {
  if (pp == 1) return true;
  for (const auto& l : w.parallel.pipeline_layouts)
    if (static_cast<long long>(l.size()) % pp == 0) return true;
  return false;
}

const char* check_pp(const WorkloadConfig& w, const SpaceContext& c) {
  if (!w.parallel.pipeline_layouts.empty()) {
    if (!pp_fits_a_layout(w, w.parallel.pp)) return "pp divides no pipeline_layout's chunk count";
    return check_devices(w, c);
  }
  // The layer slots: layers, plus the embedding and the loss where the split counts them (pipeline_split).
  if (workload::pipeline_slots(w) % w.parallel.pp || !workload::splits_evenly(w, 1))
    return "pp does not divide the layers (layer slots of the pipeline split)";
  return check_devices(w, c);
}
const char* check_dp(const WorkloadConfig& w, const SpaceContext& c) {
  if (const char* why = check_devices(w, c)) return why;
  return w.training.global_batch % w.parallel.dp ? "dp does not divide global_batch" : nullptr;
}
const char* check_virtual(const WorkloadConfig& w, const SpaceContext&) {
  int v = w.parallel.virtual_stages;
  if (!w.parallel.pipeline_layouts.empty()) {
    if (!workload::splits_evenly(w, v)) return "no pipeline_layout has pp*virtual_stages chunks";
  } else if (workload::pipeline_slots(w) % (static_cast<long long>(w.parallel.pp) * v) ||
             !workload::splits_evenly(w, v)) {
    return "pp*virtual_stages does not divide the layers (layer slots of the pipeline split)";
  }
  if (v > 1 && (w.parallel.pp == 1 || w.parallel.schedule != Schedule::interleaved))
    return "virtual_stages > 1 needs the interleaved schedule and pp > 1";
  return nullptr;
}
const char* check_micro_batch(const WorkloadConfig& w, const SpaceContext&) {
  long long per_replica = w.training.global_batch / w.parallel.dp;
  if (per_replica % w.training.micro_batch) return "micro_batch does not divide global_batch/dp";
  if (!workload::interleaved_microbatch_problem(w.parallel, per_replica / w.training.micro_batch).empty())
    return w.parallel.microbatch_group > 0
               ? "interleaved schedule: microbatches do not split into microbatch_group_size groups"
               : "interleaved schedule: microbatches not a multiple of pp";
  return nullptr;
}
// Megatron-Core folds the tp x cp x dp ranks of a stage as etp -> ep -> expert data parallel
// (workload/transformer/moe_config.cpp checks the same when it reads a file).
const char* check_expert(const WorkloadConfig& w, const SpaceContext&) {
  const auto& p = w.parallel;
  if (!w.moe.enabled()) return p.ep > 1 || p.etp > 1 ? "ep/etp > 1 without a moe: section" : nullptr;
  long long ranks = static_cast<long long>(p.tp) * p.cp * p.dp;
  if (ranks % (static_cast<long long>(p.ep) * p.etp)) return "ep*etp does not divide tp*cp*dp";
  if (w.moe.experts % p.ep) return "ep does not divide moe.experts";
  return w.moe.ffn_hidden % p.etp ? "etp does not divide moe.ffn_hidden" : nullptr;
}
const char* check_sequence_parallel(const WorkloadConfig& w, const SpaceContext&) {
  return w.moe.enabled() && w.parallel.tp > 1 && !w.parallel.sequence_parallel
             ? "MoE with tp > 1 needs sequence_parallel (Megatron-Core)"
             : nullptr;
}
const char* check_shard_group(const WorkloadConfig& w, const SpaceContext&) {
  int g = w.parallel.shard_group;
  if (g == 0) return nullptr;
  if (w.parallel.zero == 0) return "shard_group without zero";
  return g > w.parallel.dp || w.parallel.dp % g ? "shard_group does not divide dp" : nullptr;
}

// Megatron-Core's assertion for MoE with stages before replicas (transformer_config.cpp says it in full).
const char* check_rank_order(const WorkloadConfig& w, const SpaceContext&) {
  return workload::rank_order_splits_expert_groups(w)
             ? "rank_order tp-cp-pp-dp with MoE and pp > 1 needs ep*etp = tp*cp"
             : nullptr;
}

const std::vector<SearchKey> kSearchKeys = {
    {"parallel.tp",
     // Tensor parallelism inside one NVLink domain (a search bound: list larger values to try them).
     [](const WorkloadConfig&, const SpaceContext& c) {
       return powers_of_two(1, std::min(c.devices_per_node, c.devices));
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.tp = static_cast<int>(v); },
     check_tp, never, number, parse_positive},
    {"parallel.cp",
     // Powers of two while each rank keeps >= 1024 tokens of a sequence (a search bound); none with
     // multi-head latent attention, whose context parallelism podsim does not model (model_checks).
     [](const WorkloadConfig& w, const SpaceContext&) {
       if (w.model.attention_type == workload::AttentionType::mla) return Values{1};
       return powers_of_two(1, std::max(1LL, w.model.seq_len / 1024));
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.cp = static_cast<int>(v); },
     check_cp, never, number, parse_positive},
    {"parallel.pp",
     [](const WorkloadConfig& w, const SpaceContext& c) {
       Values v;
       long long slots = workload::pipeline_slots(w);
       bool layouts = !w.parallel.pipeline_layouts.empty();
       for (long long p = 1; p <= slots && model_parallel(w) * p <= c.devices; ++p)
         if (layouts ? pp_fits_a_layout(w, p) : slots % p == 0) v.push_back(p);
       return v;
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.pp = static_cast<int>(v); },
     check_pp, never, number, parse_positive},
    {"parallel.dp",
     // Data parallelism over every device left (fewer devices are never faster for the same batch), or,
     // where that many replicas do not divide the global batch, the most that do: the rest stay idle, as
     // `podsim run` reports them (576 GB200 of eight NVL72 racks at tp*pp 16 hold 36 replicas, and a batch
     // of 8192 runs on 32).
     [](const WorkloadConfig& w, const SpaceContext& c) {
       const long long most = c.devices / model_parallel(w);
       for (long long d = most; d > 1; --d)
         if (w.training.global_batch % d == 0) return Values{d};
       return Values{std::max(1LL, most)};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.dp = static_cast<int>(v); },
     check_dp, never, number, parse_positive},
    {"parallel.etp",
     // Expert tensor parallelism: none or the dense layers' tp (Megatron-Core's two usual choices).
     [](const WorkloadConfig& w, const SpaceContext&) {
       return w.moe.enabled() && w.parallel.tp > 1 ? Values{1, w.parallel.tp} : Values{1};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.etp = static_cast<int>(v); },
     check_expert, never, number, parse_positive},
    {"parallel.ep",
     // Powers of two dividing the experts and the ranks etp leaves.
     [](const WorkloadConfig& w, const SpaceContext&) {
       Values v{1};
       if (!w.moe.enabled()) return v;
       long long ranks =
           static_cast<long long>(w.parallel.tp) * w.parallel.cp * w.parallel.dp / w.parallel.etp;
       for (long long e = 2; e <= w.moe.experts && e <= ranks; e *= 2)
         if (w.moe.experts % e == 0 && ranks % e == 0) v.push_back(e);
       return v;
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.ep = static_cast<int>(v); },
     check_expert, never, number, parse_positive},
    {"moe.dispatcher",
     // NCCL's all-to-all or the flex dispatcher (DeepEP / HybridEP) once tokens cross ranks; the
     // all-gather dispatcher only where a list names it.
     [](const WorkloadConfig& w, const SpaceContext&) {
       return w.moe.enabled() && w.parallel.ep > 1
                  ? Values{dispatcher(MoeDispatcher::alltoall), dispatcher(MoeDispatcher::flex)}
                  : Values{dispatcher(MoeDispatcher::alltoall)};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) {
       w.moe.dispatcher = static_cast<MoeDispatcher>(v);
       // The SMs the flex kernels hold: Megatron-Core's default unless the file set them (the base was
       // read with the all-to-all, whose NCCL kernels leave dispatcher_sms at 0; every value is applied
       // to the base, so the all-to-all keeps the file's).
       if (w.moe.dispatcher == MoeDispatcher::flex && w.moe.dispatcher_sms == 0)
         w.moe.dispatcher_sms = workload::kFlexDispatcherSms;
     },
     fine,
     // Without expert parallelism no token leaves its rank: every dispatcher is the same.
     [](const WorkloadConfig& w, const SpaceContext&, long long v) {
       return v != dispatcher(MoeDispatcher::alltoall) && w.parallel.ep == 1;
     },
     choice_name<workload::kMoeDispatcherNames>, parse_choice<workload::kMoeDispatcherNames>},
    {"parallel.virtual_stages",
     [](const WorkloadConfig& w, const SpaceContext& c) {
       bool interleaved = !c.schedule_explicit || c.schedule == Schedule::interleaved;
       if (!w.parallel.pipeline_layouts.empty() && w.parallel.pp > 1) {
         Values v;  // the chunks per stage of each layout pp divides
         for (const auto& l : w.parallel.pipeline_layouts)
           if (l.size() % w.parallel.pp == 0 && (interleaved || l.size() == size_t(w.parallel.pp)))
             v.push_back(static_cast<long long>(l.size()) / w.parallel.pp);
         std::sort(v.begin(), v.end());
         v.erase(std::unique(v.begin(), v.end()), v.end());
         return v;
       }
       Values v{1};
       long long per_stage = workload::pipeline_slots(w) / w.parallel.pp;
       if (w.parallel.pp > 1 && interleaved)
         for (long long x = 2; x <= 8 && x <= per_stage; ++x)
           if (per_stage % x == 0) v.push_back(x);
       return v;
     },
     [](WorkloadConfig& w, const SpaceContext& c, long long v) {
       // More than one chunk per stage is the interleaved schedule; one chunk runs the file's schedule
       // (1F1B by default), and pp 1 has no pipeline to schedule.
       w.parallel.virtual_stages = static_cast<int>(v);
       bool keep = c.schedule_explicit && (v == 1 || c.schedule != Schedule::interleaved);
       w.parallel.schedule = v > 1 && !keep ? Schedule::interleaved
                             : keep         ? c.schedule
                                            : Schedule::one_f_one_b;
       if (w.parallel.pp == 1 && v == 1) w.parallel.schedule = Schedule::one_f_one_b;
     },
     check_virtual, never, number, parse_positive},
    {"training.micro_batch",
     [](const WorkloadConfig& w, const SpaceContext&) {
       Values v;
       long long per_replica = w.training.global_batch / w.parallel.dp;
       for (long long b = 1; b <= 64 && b <= per_replica; b *= 2)
         if (per_replica % b == 0) v.push_back(b);
       return v;
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) {
       w.training.micro_batch = static_cast<int>(v);
     },
     check_micro_batch, never, number, parse_positive},
    {"training.recompute",
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{0, 1, 2};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) {
       w.training.recompute = static_cast<Recompute>(v);
     },
     fine, never, choice_name<workload::kRecomputeNames>, parse_choice<workload::kRecomputeNames>},
    {"parallel.sequence_parallel",
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{0, 1};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.sequence_parallel = v != 0; },
     check_sequence_parallel,
     [](const WorkloadConfig& w, const SpaceContext&, long long v) { return v && w.parallel.tp == 1; },
     boolean, parse_bool},
    {"parallel.zero",
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{0, 1, 2, 3};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.zero = static_cast<int>(v); }, fine,
     [](const WorkloadConfig& w, const SpaceContext&, long long v) { return v && grad_ranks(w) == 1; },
     number, parse_zero},
    {"parallel.shard_group",
     // HSDP groups of 2, 4, ... data-parallel ranks when ZeRO shards something (0 = all of dp).
     [](const WorkloadConfig& w, const SpaceContext&) {
       Values v{0};
       if (w.parallel.zero > 0)
         for (long long g = 2; g < w.parallel.dp; g *= 2)
           if (w.parallel.dp % g == 0) v.push_back(g);
       return v;
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) {
       w.parallel.shard_group = static_cast<int>(v);
     },
     check_shard_group, never, number, parse_count},
    {"parallel.reshard_after_forward",
     // ZeRO-3 frees each unit after its forward (two gathers per microbatch) or keeps it for the backward
     // (one gather, the stage's parameters held gathered); nothing to reshard below ZeRO-3.
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{1, 0};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.reshard_after_forward = v != 0; },
     fine,
     [](const WorkloadConfig& w, const SpaceContext&, long long v) { return !v && w.parallel.zero < 3; },
     boolean, parse_bool},
    {"parallel.dp_overlap",
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{1, 0};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.dp_overlap = v != 0; }, fine,
     [](const WorkloadConfig& w, const SpaceContext&, long long v) { return !v && grad_ranks(w) == 1; },
     boolean, parse_bool},
    {"parallel.tp_overlap",
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{0, 1};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) { w.parallel.tp_overlap = v != 0; }, fine,
     // Transformer Engine's overlap needs tp > 1, sequence parallelism and a Hopper or newer GPU.
     [](const WorkloadConfig& w, const SpaceContext& c, long long v) {
       return v && !(w.parallel.tp > 1 && w.parallel.sequence_parallel && c.tp_overlap_supported);
     },
     boolean, parse_bool},
    {"parallel.rank_order",
     // Megatron-Core's default (a stage's replicas contiguous) and --use-tp-pp-dp-mapping (a replica
     // contiguous) where the order decides something: a server holds more than one tp x cp block (one
     // order keeps pipeline neighbours in it, the other data-parallel peers), or the fat tree tapers
     // (which traffic shares the thinner links). Otherwise every pipeline and data-parallel group crosses
     // servers on a non-blocking fabric either way: the default alone (a list searches both anyway).
     [](const WorkloadConfig& w, const SpaceContext& c) {
       long long block = static_cast<long long>(w.parallel.tp) * w.parallel.cp;
       Values v{static_cast<long long>(RankOrder::tp_cp_dp_pp)};
       if (c.fabric_tapered || block < c.devices_per_node)
         v.push_back(static_cast<long long>(RankOrder::tp_cp_pp_dp));
       return v;
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) {
       w.parallel.rank_order = static_cast<RankOrder>(v);
     },
     check_rank_order,
     // With one stage or one replica both orders place every rank alike.
     [](const WorkloadConfig& w, const SpaceContext&, long long v) {
       return v != static_cast<long long>(RankOrder::tp_cp_dp_pp) &&
              (w.parallel.pp == 1 || w.parallel.dp == 1);
     },
     choice_name<workload::kRankOrderNames>, parse_choice<workload::kRankOrderNames>},
    {"parallel.cp_algorithm",
     // How context parallelism moves keys and values: Megatron-Core's ring (overlapped with the attention
     // blocks) or the all-gather Llama 3 used (serial, the only one with sliding-window attention).
     [](const WorkloadConfig&, const SpaceContext&) {
       return Values{static_cast<long long>(workload::CpAlgorithm::ring),
                     static_cast<long long>(workload::CpAlgorithm::all_gather)};
     },
     [](WorkloadConfig& w, const SpaceContext&, long long v) {
       w.parallel.cp_algorithm = static_cast<workload::CpAlgorithm>(v);
     },
     // One reason for every cp, where the workload check would name each (transformer_config.cpp).
     [](const WorkloadConfig& w, const SpaceContext&) -> const char* {
       bool windowed = workload::windowed_layers_in(w.model, 0, w.model.layers) > 0;
       return windowed && w.parallel.cp > 1 && w.parallel.cp_algorithm == workload::CpAlgorithm::ring
                  ? "ring context parallelism with sliding-window attention (Transformer Engine: all_gather "
                    "only)"
                  : nullptr;
     },
     // Without context parallelism there is nothing to move.
     [](const WorkloadConfig& w, const SpaceContext&, long long v) {
       return v != static_cast<long long>(workload::CpAlgorithm::ring) && w.parallel.cp == 1;
     },
     choice_name<workload::kCpAlgorithmNames>, parse_choice<workload::kCpAlgorithmNames>},
};

}  // namespace

const std::vector<SearchKey>& search_keys() {
  return kSearchKeys;
}

}  // namespace podsim::driver
