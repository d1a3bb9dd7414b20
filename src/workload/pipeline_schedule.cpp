#include "podsim/workload/pipeline_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::workload {

const char* to_string(Schedule s) {
  return kScheduleNames.name(s);
}

namespace {

StageStep compute(Pass pass, int microbatch, int chunk) {
  StageStep s;
  s.compute = true;
  s.pass = pass;
  s.microbatch = microbatch;
  s.chunk = chunk;
  return s;
}

void call(StageProgram& prog, std::vector<P2p> p2p, bool async_receives = false) {
  if (p2p.empty()) return;  // Megatron skips the NCCL call when there is nothing to move
  StageStep s;
  s.compute = false;
  s.p2p = std::move(p2p);
  s.async_receives = async_receives;
  prog.push_back(std::move(s));
}

constexpr P2p kSendNextAct{true, true, true};
constexpr P2p kRecvPrevAct{false, false, true};
constexpr P2p kSendPrevGrad{true, false, false};
constexpr P2p kRecvNextGrad{false, true, false};

StageProgram no_pipeline(int m) {
  StageProgram prog;
  for (int i = 0; i < m; ++i) {
    prog.push_back(compute(Pass::forward, i, 0));
    prog.push_back(compute(Pass::backward, i, 0));
  }
  return prog;
}

// combined_1f1b_schedule_for_no_pipelining: the first forward alone, then each forward with the previous
// microbatch's backward, then the last backward alone.
StageProgram no_pipeline_combined(int m) {
  StageProgram prog;
  prog.push_back(compute(Pass::forward, 0, 0));
  for (int i = 1; i < m; ++i) {
    prog.push_back(compute(Pass::forward, i, 0));
    prog.back().combined_with_next = true;
    prog.push_back(compute(Pass::backward, i - 1, 0));
  }
  prog.push_back(compute(Pass::backward, m - 1, 0));
  return prog;
}

StageProgram gpipe(int r, int p, int m) {
  bool first = r == 0, last = r == p - 1;
  StageProgram prog;
  for (int i = 0; i < m; ++i) {
    if (!first) call(prog, {kRecvPrevAct});
    prog.push_back(compute(Pass::forward, i, 0));
    if (!last) call(prog, {kSendNextAct});
  }
  for (int i = 0; i < m; ++i) {
    if (!last) call(prog, {kRecvNextGrad});
    prog.push_back(compute(Pass::backward, i, 0));
    if (!first) call(prog, {kSendPrevGrad});
  }
  return prog;
}

// forward_backward_pipelining_without_interleaving
StageProgram one_f_one_b(int r, int p, int m) {
  bool first = r == 0, last = r == p - 1;
  int warmup = std::min(p - r - 1, m);
  int remaining = m - warmup;
  StageProgram prog;
  for (int i = 0; i < warmup; ++i) {
    if (!first) call(prog, {kRecvPrevAct});
    prog.push_back(compute(Pass::forward, i, 0));
    if (!last) call(prog, {kSendNextAct});
  }
  if (remaining > 0 && !first) call(prog, {kRecvPrevAct});
  for (int i = 0; i < remaining; ++i) {
    prog.push_back(compute(Pass::forward, warmup + i, 0));
    if (!last) call(prog, {kSendNextAct, kRecvNextGrad});
    prog.push_back(compute(Pass::backward, i, 0));
    if (!first) {
      if (i == remaining - 1)
        call(prog, {kSendPrevGrad});
      else
        call(prog, {kSendPrevGrad, kRecvPrevAct});
    }
  }
  for (int i = 0; i < warmup; ++i) {
    if (!last) call(prog, {kRecvNextGrad});
    prog.push_back(compute(Pass::backward, remaining + i, 0));
    if (!first) call(prog, {kSendPrevGrad});
  }
  return prog;
}

// Megatron-Core's schedule table (schedules.py get_schedule_table): the chunk passes of a stage in the
// order its forwards run, `group` contiguous microbatches per chunk at a time (the last group takes what
// is left), as (microbatch, chunk). With group = pp it is the classic depth-first interleaving.
std::vector<std::pair<int, int>> schedule_table(int m, int v, int group) {
  std::vector<std::pair<int, int>> table;
  for (int first = 0; first < m; first += group) {
    int end = std::min(first + group, m);
    for (int c = 0; c < v; ++c)
      for (int mb = first; mb < end; ++mb) table.emplace_back(mb, c);
  }
  return table;
}

// forward_backward_pipelining_with_interleaving as Megatron-Core runs it with its schedule table
// (`group`: microbatch_group_size_per_vp_stage; `combined`: one more warmup forward, so that the paired
// forward and backward of each steady-state step are independent, and the pairs marked; `overlap`: the
// P2pOverlap of build_schedule).
StageProgram interleaved(int r, int p, int m, int v, int group, bool combined, P2pOverlap overlap_p2p) {
  const bool overlap = overlap_p2p.steady, edges = overlap_p2p.steady && overlap_p2p.warmup_flush;
  auto call = [](StageProgram& prog, std::vector<P2p> p2p, bool async) {
    workload::call(prog, std::move(p2p), async);
  };
  const int total = m * v;
  const auto table = schedule_table(m, v, group);
  auto chunk_of = [&](int k, bool forward) {
    int c = table[static_cast<size_t>((k % total + total) % total)].second;
    return forward ? c : v - 1 - c;
  };
  auto microbatch_of = [&](int k) { return table[static_cast<size_t>(k)].first; };
  bool first_rank = r == 0, last_rank = r == p - 1;
  // recv_tensor_from_previous_stage: the leading stage (the first rank forward, the last backward) runs
  // p - 1 iterations ahead of the ending one, so at iteration k it receives what the ending stage made at
  // k - (p - 1): nothing before that, nor after the ending stage's last chunk. Every other stage receives.
  auto receives = [&](int k, bool forward) {
    if (!(forward ? first_rank : last_rank)) return true;
    return k >= p - 1 && chunk_of(k - (p - 1), forward) != (forward ? v - 1 : 0);
  };
  int warmup = (p - r - 1) * 2 + (v - 1) * group + (combined ? 1 : 0);
  bool all_warmup = warmup >= total;
  warmup = std::min(warmup, total);
  int remaining = total - warmup;

  StageProgram prog;
  if (!first_rank) call(prog, {kRecvPrevAct}, edges);
  for (int k = 0; k < warmup; ++k) {
    int c = chunk_of(k, true);
    prog.push_back(compute(Pass::forward, microbatch_of(k), c));
    bool recv_prev = receives(k, true) && k != total - 1;
    bool send = !(last_rank && c == v - 1);
    std::vector<P2p> ops;
    if (send) ops.push_back(kSendNextAct);
    if (recv_prev) ops.push_back(kRecvPrevAct);
    bool first_gradient = k == warmup - 1 && !all_warmup && !last_rank;
    if (first_gradient && overlap && !edges) {  // the steady state's first gradient, received asynchronously
      call(prog, ops, false);
      call(prog, {kRecvNextGrad}, true);
      continue;
    }
    if (first_gradient) ops.push_back(kRecvNextGrad);
    call(prog, ops, edges);
  }
  for (int k = 0; k < remaining; ++k) {
    int fk = k + warmup;
    int fc = chunk_of(fk, true), bc = chunk_of(k, false);
    bool send_act = !(last_rank && fc == v - 1);
    bool send_grad = !(first_rank && bc == 0);
    bool recv_prev = receives(fk, true);
    bool recv_next = receives(k, false);
    if (k == remaining - 1) recv_prev = false;
    std::vector<P2p> forward_ops, backward_ops;
    if (send_act) forward_ops.push_back(kSendNextAct);
    if (recv_prev) forward_ops.push_back(kRecvPrevAct);
    if (send_grad) backward_ops.push_back(kSendPrevGrad);
    if (recv_next) backward_ops.push_back(kRecvNextGrad);
    prog.push_back(compute(Pass::forward, microbatch_of(fk), fc));
    prog.back().combined_with_next = combined;
    if (overlap && !combined) {  // the forward's call, then the backward's (schedules.py with overlap)
      call(prog, forward_ops, true);
      prog.push_back(compute(Pass::backward, microbatch_of(k), bc));
      call(prog, backward_ops, true);
      continue;
    }
    prog.push_back(compute(Pass::backward, microbatch_of(k), bc));
    std::vector<P2p> ops = forward_ops;  // one batched call for both directions
    ops.insert(ops.end(), backward_ops.begin(), backward_ops.end());
    call(prog, ops, overlap);
  }
  if (all_warmup && !last_rank) call(prog, {kRecvNextGrad}, edges);
  for (int k = remaining; k < total; ++k) {
    int bc = chunk_of(k, false);
    prog.push_back(compute(Pass::backward, microbatch_of(k), bc));
    bool recv_next = receives(k, false) && k != total - 1;
    bool send_grad = !(first_rank && bc == 0);
    std::vector<P2p> ops;
    if (send_grad) ops.push_back(kSendPrevGrad);
    if (recv_next) ops.push_back(kRecvNextGrad);
    call(prog, ops, edges);
  }
  return prog;
}

}  // namespace

std::string interleaved_group_problem(int stages, long long microbatches, int group) {
  int n = group > 0 ? group : stages;
  if (n < stages || n > microbatches)
    return fmt::format(
        "{} contiguous microbatches per chunk must be between pp={} and the {} microbatches "
        "of a step",
        n, stages, microbatches);
  long long last = microbatches % n;
  if (last > 0 && last < stages)
    return group > 0 ? fmt::format(
                           "the {} microbatches leave a last group of {} (microbatches % {}), fewer "
                           "than pp={}: it must be whole or at least pp",
                           microbatches, last, n, stages)
                     : fmt::format("the number of microbatches ({}) must be a multiple of pp={}",
                                   microbatches, stages);
  return {};
}

std::vector<StageProgram> build_schedule(Schedule schedule, int stages, int microbatches, int chunks,
                                         bool combined_1f1b, P2pOverlap overlap_p2p, int microbatch_group) {
  if (stages < 1 || microbatches < 1 || chunks < 1)
    throw std::invalid_argument("schedule needs positive sizes");
  if (combined_1f1b && stages > 1 && (schedule != Schedule::interleaved || chunks == 1))
    throw std::invalid_argument(
        "combined 1F1B with pipeline stages needs the interleaved schedule with "
        "virtual stages (Megatron-Core requires virtual_pipeline_model_parallel_size)");
  // Only the interleaved schedule runs chunks other than 0: a stage split into chunks under any other
  // schedule would silently simulate 1/chunks of its layers.
  if (chunks > 1 && (stages == 1 || schedule != Schedule::interleaved))
    throw std::invalid_argument("model chunks (virtual stages) need the interleaved schedule and pp > 1");
  std::vector<StageProgram> programs;
  if (stages == 1) {
    programs.push_back(combined_1f1b ? no_pipeline_combined(microbatches) : no_pipeline(microbatches));
    return programs;
  }
  for (int r = 0; r < stages; ++r) {
    switch (schedule) {
      case Schedule::gpipe: programs.push_back(gpipe(r, stages, microbatches)); break;
      case Schedule::interleaved:
        if (chunks == 1) {  // Megatron runs the plain 1F1B schedule without virtual stages
          programs.push_back(one_f_one_b(r, stages, microbatches));
          break;
        }
        if (auto why = interleaved_group_problem(stages, microbatches, microbatch_group); !why.empty())
          throw std::invalid_argument("interleaved schedule: " + why);
        programs.push_back(interleaved(r, stages, microbatches, chunks,
                                       microbatch_group > 0 ? microbatch_group : stages, combined_1f1b,
                                       overlap_p2p));
        break;
      default: programs.push_back(one_f_one_b(r, stages, microbatches)); break;
    }
  }
  return programs;
}

std::vector<int> peak_in_flight(const std::vector<StageProgram>& programs) {
  std::vector<int> peaks;
  for (const auto& prog : programs) {
    int live = 0, peak = 0;
    for (const auto& step : prog) {
      if (!step.compute) continue;
      live += step.pass == Pass::forward ? 1 : -1;
      peak = std::max(peak, live);
    }
    peaks.push_back(peak);
  }
  return peaks;
}

}  // namespace podsim::workload
