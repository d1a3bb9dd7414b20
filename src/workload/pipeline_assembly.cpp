#include "podsim/workload/pipeline_assembly.hpp"

#include <fmt/format.h>

#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>

namespace podsim::workload {
namespace {

struct Call {
  int stage;
  int pre_task;            // last task on the stage's compute stream before the call
  int done_task = -1;      // zero-time marker on the compute stream that completes the call
  std::vector<int> parts;  // transfers and gathers the call waits for
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
    for (size_t i = 0; i < prog.size(); ++i) {
      const StageStep& step = prog[i];
      if (step.compute) {
        cb.compute(s, step, step.pass == Pass::backward && last_backward[step.chunk] == i);
        continue;
      }
      int call = static_cast<int>(calls.size());
      calls.push_back({s, g.streams[compute_streams[s]].last_task, -1, {}});
      for (const P2p& op : step.p2p) {
        int peer = op.next ? (s + 1) % p : (s - 1 + p) % p;
        int from = op.send ? s : peer, to = op.send ? peer : s;
        auto& [sends, recvs] = channels[{from, to, op.activation}];
        (op.send ? sends : recvs).push_back(call);
      }
      calls[call].done_task = g.add_task(marker(compute_streams[s], s));
    }
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
      sender.parts.push_back(transfer);
      int gather = cb.gather_plan ? cb.gather_plan(to) : -1;
      if (gather < 0) {
        receiver.parts.push_back(transfer);
        continue;
      }
      receiver.parts.push_back(g.add_comm(TaskKind::gather, -1, to, gather, Category::pp, {transfer}));
    }
  }
  for (const auto& call : calls)
    for (int part : call.parts) g.tasks[call.done_task].deps.push_back(part);
  return flush_done;
}

}  // namespace podsim::workload
