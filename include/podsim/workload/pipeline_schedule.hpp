// Pipeline schedules as per-stage programs, written the way Megatron-LM's schedules.py runs them:
// compute steps (forward or backward of one microbatch on one model chunk) separated by blocking
// point-to-point calls, each of which sends and/or receives one or more tensors to the neighbouring
// stages and returns only when all of them are done.
#pragma once

#include <string>
#include <vector>

#include "podsim/core/names.hpp"

namespace podsim::workload {

enum class Schedule { none, gpipe, one_f_one_b, interleaved };
inline constexpr auto kScheduleNames = name_table<Schedule>({{Schedule::none, "none"},
                                                             {Schedule::gpipe, "gpipe"},
                                                             {Schedule::one_f_one_b, "1f1b"},
                                                             {Schedule::interleaved, "interleaved"}});
const char* to_string(Schedule s);  // "gpipe", "1f1b", ...

enum class Pass { forward, backward };

struct P2p {
  bool send = true;        // send (true) or receive
  bool next = true;        // peer is the next stage (true) or the previous one; wraps around when interleaved
  bool activation = true;  // forward activation (true) or backward gradient
};

struct StageStep {
  bool compute = true;
  // compute step
  Pass pass = Pass::forward;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this stage (0 .. virtual_stages-1)
  // A forward step that runs as one combined step with the backward step right after it (combined 1F1B:
  // the two passes' layers interleave so that the communication of one hides behind the other's compute).
  bool combined_with_next = false;
  // communication step
  std::vector<P2p> p2p;
  // Megatron-Core's overlap_p2p_comm: the call posts its receives and returns; each receive is waited just
  // before the next compute step that consumes it (an activation before the next forward, a gradient
  // before the next backward), so the transfer runs beside the compute in between. Sends still complete
  // before the call returns.
  bool async_receives = false;
};

using StageProgram = std::vector<StageStep>;

// Programs of all `stages` stages for `microbatches` microbatches and `chunks` model chunks per stage.
// `combined_1f1b`: Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm,
// megatron/core/pipeline_parallel/combined_1f1b.py): one more warmup forward, then every steady-state
// forward paired with the backward after it (StageStep::combined_with_next). Without a pipeline:
// F0, (F1 B0), (F2 B1), ..., B(m-1). It needs the interleaved schedule when stages > 1, as Megatron-Core
// does.
// Megatron-Core's overlap of the interleaved schedule's point-to-point communication with compute
// (ModelParallelConfig.overlap_p2p_comm and overlap_p2p_comm_warmup_flush; with virtual stages only, as
// Megatron-Core runs it; the other schedules ignore it). `steady`: the steady state receives
// asynchronously (StageStep::async_receives) and splits each forward-backward pair's call in two: after
// the forward, send the activation and post the next one's receive; after the backward, the same for the
// gradients. `warmup_flush`: the warm-up's and the flush's calls receive asynchronously too.
struct P2pOverlap {
  bool steady = false;
  bool warmup_flush = false;
};

// `microbatch_group`: Megatron-Core's microbatch_group_size_per_vp_stage, the contiguous microbatches each
// chunk of the interleaved schedule runs at a time (0: pp, the depth-first default). Larger groups hold more
// activations ((p - r - 1) * 2 + (v - 1) * group warm-up passes on stage r) and let the number of
// microbatches be other than a multiple of pp (interleaved_group_problem).
std::vector<StageProgram> build_schedule(Schedule schedule, int stages, int microbatches, int chunks,
                                         bool combined_1f1b = false, P2pOverlap overlap = {},
                                         int microbatch_group = 0);

// Megatron-Core's rule for the interleaved schedule (schedules.py): pp <= group <= microbatches, and the
// last group either whole or at least pp long (with the default group = pp: microbatches a multiple of pp).
// Empty when it holds, else why not (for the error message).
std::string interleaved_group_problem(int stages, long long microbatches, int group = 0);

// The largest number of forward chunk-passes whose backward has not finished, per stage: the number of
// microbatch activations each stage holds at its peak.
std::vector<int> peak_in_flight(const std::vector<StageProgram>& programs);

}  // namespace podsim::workload
