#include "podsim/study/output_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "podsim/core/error.hpp"

namespace podsim::study {
namespace {

std::string holder_of(int fd) {
  char buf[32] = {0};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<size_t>(n) : 0);
  pid.erase(pid.find_last_not_of(" \n") + 1);
  return pid;
}

// True when `fd` is still the file at `path` (its holder may have removed it after we opened it).
bool still_at_path(int fd, const std::string& path) {
  struct stat opened {
  }, named{};
  return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
         opened.st_dev == named.st_dev;
}

}  // namespace

OutputLock::OutputLock(std::string path, const std::string& what, const std::string& job)
    : path_(std::move(path)) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw InputError(
          fmt::format("{}: cannot create the {} lock file: {}", path_, job, std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      std::string holder = holder_of(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw InputError(fmt::format(
            "{}: another podsim {}{} is writing these results (lock {}); wait for it to finish, or give "
            "this {} another --out directory",
            what, job, holder.empty() ? "" : " (pid " + holder + ")", path_, job));
      throw InputError(fmt::format("{}: cannot lock (does this file system support flock?): {}", path_,
                                   std::strerror(err)));
    }
    if (!still_at_path(fd, path_)) {
      ::close(fd);
      continue;
    }
    std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
      ::close(fd);
      throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    }
    fd_ = fd;
    return;
  }
  throw std::runtime_error(fmt::format("{}: the lock file keeps being replaced", path_));
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still holding it: see still_at_path
  ::close(fd_);
}

}  // namespace podsim::study
