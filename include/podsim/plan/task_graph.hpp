// The plan layer: what workload kinds produce and the engine consumes, a DAG of tasks, each a stretch of
// device-busy time followed by zero or more phases of network flows. Tasks on one stream run in order (the
// builder makes each task depend on its stream predecessor); tasks without a stream (point-to-point transfers
// between two stages) start as soon as their dependencies are met.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "podsim/core/names.hpp"
#include "podsim/plan/flow.hpp"

namespace podsim::plan {

// Where time goes. When a lane does several things at once the time is charged to the first in
// `kChargeOrder`; time with nothing to do is idle (the pipeline bubble).
enum class Category : std::uint8_t {
  compute,    // kernels on the device
  tp,         // tensor-parallel collectives
  ep,         // expert-parallel all-to-all (mixture of experts)
  pp,         // pipeline point-to-point transfers
  dp,         // data-parallel gradient reduction and parameter gathers
  stream,     // parameter / embedding streaming (weight streaming, parameter-server pulls and pushes)
  storage,    // host memory and SSD tiers
  optimizer,  // the optimizer step
  cp,         // context-parallel KV transfers / collectives (ring attention, all-gather of K and V)
  count
};
constexpr int kCategories = static_cast<int>(Category::count);
constexpr Category kChargeOrder[kCategories] = {Category::compute, Category::tp,        Category::cp,
                                                Category::ep,      Category::optimizer, Category::pp,
                                                Category::stream,  Category::storage,   Category::dp};
// Categories added after the output columns were fixed: their columns come after the existing ones
// (summary.csv: after the settings; breakdown.csv: at the end), whatever their place in the charge order.
constexpr bool is_late_column(Category c) {
  return c == Category::cp;
}
inline constexpr auto kCategoryNames = name_table<Category>({{Category::compute, "compute"},
                                                             {Category::tp, "tp"},
                                                             {Category::ep, "ep"},
                                                             {Category::pp, "pp"},
                                                             {Category::dp, "dp"},
                                                             {Category::stream, "stream"},
                                                             {Category::storage, "storage"},
                                                             {Category::optimizer, "optimizer"},
                                                             {Category::cp, "cp"}});
static_assert(kCategoryNames.entries.size() == kCategories, "a name per Category");
const char* to_string(Category c);    // "compute", "tp", ...
const char* description(Category c);  // "exposed tensor-parallel comm", ...

struct Stream {
  std::string name;  // "stage 3 compute", "stage 3 dp"
  int stage = -1;
  int device = -1;          // representative device rank
  bool device_busy = true;  // its tasks' device time occupies the device (compute streams)
  int last_task = -1;       // most recently added task, the next one's implicit dependency
};

// What a task is, for traces, tests and readers; the engine never looks at it.
enum class TaskKind : std::uint8_t {
  none,
  forward,         // forward pass (of a chunk, a layer, a step)
  backward,        // backward pass
  recompute,       // forward recomputed before its backward (rematerialization)
  transfer,        // pipeline point-to-point send/recv
  gather,          // all-gather of what a transfer scattered; rows pulled from peer devices
  call_done,       // zero-time marker: a blocking call (or a set of tasks) is complete
  dp,              // data-parallel gradient reduction or parameter gather
  embedding_sync,  // all-reduce of the tied embedding's gradients between first and last stage
  sync,            // model-parallel all-reduce of small values (clipping, overflow check)
  optimizer,       // optimizer step
  weight_stream,   // weights streamed to the device
  dedup,           // deduplication of the step's keys in host memory
  ssd_read,        // rows read from SSD
  ssd_write,       // rows written back to SSD
  dram_load,       // rows staged in host memory
  dram_merge,      // updated rows merged into host memory
  host_copy,       // host <-> device copy (PCIe)
  pull,            // parameters pulled from servers
  push,            // gradients pushed to servers
  count
};
inline constexpr auto kTaskKindNames = name_table<TaskKind>({
    {TaskKind::none, "task"},
    {TaskKind::forward, "forward"},
    {TaskKind::backward, "backward"},
    {TaskKind::recompute, "recompute"},
    {TaskKind::transfer, "transfer"},
    {TaskKind::gather, "gather"},
    {TaskKind::call_done, "call done"},
    {TaskKind::dp, "data-parallel"},
    {TaskKind::embedding_sync, "embedding sync"},
    {TaskKind::sync, "sync"},
    {TaskKind::optimizer, "optimizer"},
    {TaskKind::weight_stream, "weight stream"},
    {TaskKind::dedup, "dedup"},
    {TaskKind::ssd_read, "ssd read"},
    {TaskKind::ssd_write, "ssd write"},
    {TaskKind::dram_load, "dram load"},
    {TaskKind::dram_merge, "dram merge"},
    {TaskKind::host_copy, "host copy"},
    {TaskKind::pull, "pull"},
    {TaskKind::push, "push"},
});
static_assert(kTaskKindNames.entries.size() == static_cast<size_t>(TaskKind::count), "a name per TaskKind");
const char* to_string(TaskKind k);  // "forward", "call done", ...

struct Task {
  TaskKind kind = TaskKind::none;  // label for traces and tests
  int stream = -1;                 // -1: not stream-ordered
  int stage = -1;                  // stage whose timeline this task belongs to (-1: none)
  int peer_stage = -1;             // for transfers: the other stage involved
  std::vector<int> deps = {};
  double compute_seconds = 0;  // device busy time, spent first
  Category compute_category = Category::compute;
  int plan = -1;  // index into TaskGraph::plans, -1 for none
  Category comm_category = Category::tp;
  int microbatch = -1;
  int chunk = -1;
};

struct TaskGraph {
  std::vector<Stream> streams;
  std::vector<Task> tasks;
  std::vector<CommPlan> plans;
  int stages = 0;                       // lanes whose time is accounted (pipeline stages, device classes)
  std::vector<int> stage_devices;       // representative device of each lane
  std::vector<std::string> lane_names;  // "stage 0", ... (optional)
  std::string lane_kind = "pipeline stage";  // what a lane is, for reports ("pipeline stage", "CS-2 system")

  int add_stream(std::string name, int stage, int device, bool device_busy = true);
  // Appends a task; a task on a stream also depends on the stream's previous task, so streams run in order.
  int add_task(Task t);
  // Device time on `stream` (its lane: `stage`), charged to `category`; nothing on the network.
  int add_compute(TaskKind kind, int stream, int stage, double seconds, Category category = Category::compute,
                  std::vector<int> deps = {});
  // The phases of plan `plan` (-1: none, a zero-time marker) without device time first, charged to
  // `category`.
  int add_comm(TaskKind kind, int stream, int stage, int plan, Category category, std::vector<int> deps = {});
  int add_plan(CommPlan plan);
  // Tasks in an order where every dependency comes first; throws std::logic_error on a cycle.
  std::vector<int> topological_order() const;
};

}  // namespace podsim::plan
