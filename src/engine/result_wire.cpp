#include "result_wire.hpp"

#include <cstdint>
#include <stdexcept>

#include "podsim/core/byte_stream.hpp"

namespace podsim::engine {
namespace {

// What the replay's child process sends its parent: a version tag, then either the result or the
// message of the exception that stopped it. Both sides are the same build, so plain bytes are exact.
constexpr std::uint32_t kWireVersion = 0x50535231;  // "PSR1"
enum class WireStatus : std::uint8_t { result = 0, error = 1 };

}  // namespace

std::string encode_result(const ReplayResult& r) {
  ByteWriter w;
  w.put(kWireVersion);
  w.put(WireStatus::result);
  w.put(r.makespan);
  w.put(r.simgrid_activities);
  w.put(r.closed_form_phases);
  w.put(r.handed_over_phases);
  w.put(r.hosts);
  w.put(r.links);
  w.put_vector(r.tasks);
  return w.take();
}

std::string encode_error(const std::string& message) {
  ByteWriter w;
  w.put(kWireVersion);
  w.put(WireStatus::error);
  w.put_string(message);
  return w.take();
}

ReplayResult decode_result(const std::string& bytes) {
  ByteReader in(bytes);
  if (in.get<std::uint32_t>() != kWireVersion)
    throw std::runtime_error("simulation process sent a result of another format");
  if (in.get<WireStatus>() == WireStatus::error)
    throw std::runtime_error("simulation failed: " + in.get_string());
  ReplayResult r;
  r.makespan = in.get<double>();
  r.simgrid_activities = in.get<long long>();
  r.closed_form_phases = in.get<long long>();
  r.handed_over_phases = in.get<long long>();
  r.hosts = in.get<int>();
  r.links = in.get<int>();
  r.tasks = in.get_vector<TaskTimes>();
  if (!in.at_end()) throw std::runtime_error("simulation process sent a result of another format");
  return r;
}

}  // namespace podsim::engine
