// Runs a function in a forked child process and brings back the bytes it returns. Used where a library
// may be initialized only once per process (SimGrid 3.32: one engine per process): the parent stays
// clean and can run the work again and again.
#pragma once

#include <functional>
#include <string>

namespace podsim {

struct ChildOutcome {
  bool complete = false;  // the child returned from `work` and its bytes arrived whole
  std::string bytes;      // what `work` returned (empty unless complete)
  int signal = 0;         // the signal that killed the child, or 0
};

// Forks (after flushing stdio so buffered output is not written twice), runs `work` in the child, sends
// its result back over a pipe (length-prefixed) and waits for the child. `work` should not throw; if it
// does, the outcome is incomplete. Throws std::runtime_error when the pipe or the fork cannot be made.
ChildOutcome run_in_child(const std::function<std::string()>& work);

// run_in_child in two halves, so that a caller can keep several children running at once (`podsim plan`
// simulates candidates in parallel): start_child forks and returns at once; `fd` becomes readable when
// the child has sent its bytes or died (poll it); finish_child reads the bytes and reaps the child.
struct StartedChild {
  int pid = -1;
  int fd = -1;  // the read end of the child's pipe
};
StartedChild start_child(const std::function<std::string()>& work);
ChildOutcome finish_child(const StartedChild& child);

}  // namespace podsim
