// libFuzzer entry point; PODSIM_FUZZ_ENTRY names the function of entries.hpp this binary fuzzes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  podsim::fuzz::PODSIM_FUZZ_ENTRY(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
