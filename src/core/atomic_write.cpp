#include "podsim/core/atomic_write.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace fs = std::filesystem;

namespace podsim {

void atomic_write(const std::string& path, const std::string& content) {
  atomic_write(path, [&](std::ostream& out) { out << content; });
}

void atomic_write(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("{}: cannot write the file: it is a directory", printable(path)));
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw InputError(fmt::format("{}: cannot write the file: {}", printable(path),
                                   errno ? std::strerror(errno) : "cannot create it"));
    write(out);
    out.flush();
    if (!out) {
      int err = errno;
      out.close();
      fs::remove(tmp, ec);
      throw InputError(fmt::format("{}: cannot write the file: {}", printable(path),
                                   err ? std::strerror(err) : "write failed (disk full?)"));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw InputError(fmt::format("{}: cannot write the file: {}", printable(path), ec.message()));
  }
}

}  // namespace podsim
