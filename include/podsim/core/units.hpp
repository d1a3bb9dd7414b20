// Byte units, one definition for every layer: binary GiB for memory sizes (what device memory and HBM
// capacities are quoted in), decimal GB where a figure is quoted in SI units (bandwidths, streamed bytes).
#pragma once

namespace podsim {

inline constexpr double GB = 1e9;
inline constexpr double GiB = 1073741824.0;

}  // namespace podsim
