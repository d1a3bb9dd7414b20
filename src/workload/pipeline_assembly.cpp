#include "podsim/workload/pipeline_assembly.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>

namespace podsim::workload {
namespace {

struct Call {
  int stage = 0;
  int pre_task = -1;            // last task on the stage's compute stream before the call
  int done_task = -1;           // zero-time marker on the compute stream that completes the call
  std::vector<int> parts = {};  // transfers and gathers the call waits for
  // With asynchronous receives (StageStep::async_receives), the markers each receive is waited at instead:
  // the one before the next forward (activations) and before the next backward (gradients).
  bool async = false;
  int activation_wait = -1, gradient_wait = -1;
  // ... and its gradient sends complete at the next call that sends gradients (Megatron-Core waits the
  // previous send_prev handle after posting the next one; an activation send is waited at once, before
  // the output is deallocated).
  int gradient_send_wait = -1;
};

Task marker(int stream, int stage) {
  return {.kind = TaskKind::call_done, .stream = stream, .stage = stage};
}

}  // namespace

std::vector<int> assemble_pipeline(TaskGraph& g, const std::vector<StageProgram>& programs,
                                   const std::vector<int>& compute_streams, const PipelineCallbacks& cb) {
  const int p = static_cast<int>(programs.size());
  std::vector<Call> calls;
  // Channel (from, to, activation?) -> FIFO of the calls that send and of those that receive.
  std::map<std::tuple<int, int, bool>, std::pair<std::deque<int>, std::deque<int>>> channels;
  std::vector<int> flush_done;
  for (int s = 0; s < p; ++s) {
    const StageProgram& prog = programs[s];
    std::map<int, size_t> last_backward;  // chunk -> index of its final backward step
    for (size_t i = 0; i < prog.size(); ++i)
      if (prog[i].compute && prog[i].pass == Pass::backward) last_backward[prog[i].chunk] = i;
    // Asynchronous calls whose activation / gradient receives the next forward / backward waits for, and
    // the one whose gradient sends the next gradient-sending call waits for.
    std::vector<int> awaiting_activation, awaiting_gradient, awaiting_gradient_send;
    auto wait_for = [&](std::vector<int>& awaiting, int Call::*wait) {
      if (awaiting.empty()) return;
      int w = g.add_task(marker(compute_streams[s], s));
      for (int c : awaiting) calls[c].*wait = w;
      awaiting.clear();
    };
    for (size_t i = 0; i < prog.size(); ++i) {
      const StageStep& step = prog[i];
      if (step.compute) {
        if (step.pass == Pass::forward) wait_for(awaiting_activation, &Call::activation_wait);
        if (step.pass == Pass::backward) wait_for(awaiting_gradient, &Call::gradient_wait);
        cb.compute(s, step, step.pass == Pass::backward && last_backward[step.chunk] == i);
        continue;
      }
      int call = static_cast<int>(calls.size());
      Call c{.stage = s, .pre_task = g.streams[compute_streams[s]].last_task};
      c.async = step.async_receives;
      calls.push_back(std::move(c));
      for (const P2p& op : step.p2p) {
        int peer = op.next ? (s + 1) % p : (s - 1 + p) % p;
        int from = op.send ? s : peer, to = op.send ? peer : s;
        auto& [sends, recvs] = channels[{from, to, op.activation}];
        (op.send ? sends : recvs).push_back(call);
        if (step.async_receives && !op.send)
          (op.activation ? awaiting_activation : awaiting_gradient).push_back(call);
      }
      calls[call].done_task = g.add_task(marker(compute_streams[s], s));
      bool sends_gradient = std::any_of(step.p2p.begin(), step.p2p.end(),
                                        [](const P2p& op) { return op.send && !op.activation; });
      if (step.async_receives && sends_gradient) {
        for (int c : awaiting_gradient_send) calls[c].gradient_send_wait = calls[call].done_task;
        awaiting_gradient_send = {call};
      }
    }
    // What nothing waited for before the flush (receives not consumed, the last gradient send) it waits for.
    wait_for(awaiting_activation, &Call::activation_wait);
    wait_for(awaiting_gradient, &Call::gradient_wait);
    wait_for(awaiting_gradient_send, &Call::gradient_send_wait);
    flush_done.push_back(g.add_task(marker(compute_streams[s], s)));
  }
  for (auto& [key, queues] : channels) {
    auto [from, to, activation] = key;
    auto& [sends, recvs] = queues;
    if (sends.size() != recvs.size())
      throw std::logic_error(fmt::format("pipeline schedule mismatch on {}->{}: {} sends, {} receives", from,
                                         to, sends.size(), recvs.size()));
    for (size_t i = 0; i < sends.size(); ++i) {
      Call& sender = calls[sends[i]];
      Call& receiver = calls[recvs[i]];
      std::vector<int> deps;
      if (sender.pre_task >= 0) deps.push_back(sender.pre_task);
      if (receiver.pre_task >= 0) deps.push_back(receiver.pre_task);
      int transfer = g.add_task({.kind = TaskKind::transfer,
                                 .stage = to,
                                 .peer_stage = from,
                                 .deps = std::move(deps),
                                 .plan = cb.transfer_plan(from, to),
                                 .comm_category = Category::pp,
                                 .microbatch = static_cast<int>(i),
                                 .chunk = activation ? 0 : 1});
      if (sender.async && !activation)
        g.tasks[sender.gradient_send_wait].deps.push_back(transfer);
      else
        sender.parts.push_back(transfer);
      int gather = cb.gather_plan ? cb.gather_plan(to) : -1;
      int received =
          gather < 0 ? transfer : g.add_comm(TaskKind::gather, -1, to, gather, Category::pp, {transfer});
      if (!receiver.async) {
        receiver.parts.push_back(received);
        continue;
      }
      int wait = activation ? receiver.activation_wait : receiver.gradient_wait;
      g.tasks[wait].deps.push_back(received);
    }
  }
  for (const auto& call : calls)
    for (int part : call.parts) g.tasks[call.done_task].deps.push_back(part);
  return flush_done;
}

std::vector<int> blocking_transfer_calls(const std::vector<StageProgram>& programs) {
  std::vector<int> out;
  for (const StageProgram& prog : programs) {
    auto computes = [](const StageStep& step) { return step.compute; };
    auto first = std::find_if(prog.begin(), prog.end(), computes);
    auto last = std::find_if(prog.rbegin(), prog.rend(), computes).base();
    int calls = 0;
    for (auto it = first; it < last; ++it) {
      if (it->compute || it->p2p.empty()) continue;
      bool waits = !it->async_receives || std::any_of(it->p2p.begin(), it->p2p.end(),
                                                      [](const P2p& op) { return op.send && op.activation; });
      calls += waits;
    }
    out.push_back(calls);
  }
  return out;
}

}  // namespace podsim::workload
