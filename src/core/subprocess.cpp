#include "podsim/core/subprocess.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace podsim {
namespace {

// Moves all `size` bytes with ::read or ::write, retrying short transfers and interrupted calls.
template <class Byte, class Io>
bool transfer_all(int fd, Byte* data, size_t size, Io io) {
  while (size > 0) {
    ssize_t n = io(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, size_t size) {
  return transfer_all(fd, static_cast<const char*>(data), size, ::write);
}

bool read_all(int fd, void* data, size_t size) {
  return transfer_all(fd, static_cast<char*>(data), size, ::read);
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& work) {
  int code = 1;
  try {
    std::string bytes = work();
    std::uint64_t size = bytes.size();
    if (write_all(fd, &size, sizeof size) && write_all(fd, bytes.data(), bytes.size())) code = 0;
  } catch (...) {
  }
  ::close(fd);
  _exit(code);
}

}  // namespace

StartedChild start_child(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

ChildOutcome finish_child(const StartedChild& child) {
  ChildOutcome out;
  std::uint64_t size = 0;
  if (read_all(child.fd, &size, sizeof size)) {
    out.bytes.resize(static_cast<size_t>(size));
    out.complete = read_all(child.fd, out.bytes.data(), out.bytes.size());
  }
  ::close(child.fd);
  int wstatus = 0;
  while (::waitpid(child.pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) out.signal = WTERMSIG(wstatus);
  if (!out.complete) out.bytes.clear();
  return out;
}

ChildOutcome run_in_child(const std::function<std::string()>& work) {
  return finish_child(start_child(work));
}

}  // namespace podsim
