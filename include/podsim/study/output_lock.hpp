// An exclusive lock on a sweep's results files, so two sweeps never write the same partial file.
//
// A lock file (flock, released by the kernel whenever the holder dies, even by SIGKILL) holds the pid of its
// holder for the message a second sweep gets. The holder removes the file when it is done; a process that
// opened the file just before it was removed notices (the path now names another file or none) and tries
// again, so two processes can never both believe they hold the lock.
#pragma once

#include <string>

namespace podsim::study {

class OutputLock {
 public:
  // Throws InputError naming `what` (the results directory) and `job` (what writes them: a sweep, a plan
  // search) when another process holds the lock.
  OutputLock(std::string path, const std::string& what, const std::string& job = "sweep");
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace podsim::study
