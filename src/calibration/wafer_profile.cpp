#include "podsim/calibration/wafer_profile.hpp"

#include "podsim/core/config_node.hpp"

namespace podsim::calibration {

WaferProfile load_wafer_profile(const std::string& path) {
  ConfigNode root = ConfigNode::load_file(path);
  WaferProfile p;
  p.file = path;
  p.device = root.string("device");
  p.gemm_efficiency = root.fraction_or("gemm_efficiency", p.gemm_efficiency);
  p.sram_efficiency = root.fraction_or("sram_efficiency", p.sram_efficiency);
  p.kernel_overhead_s = root.non_negative_or("kernel_overhead_us", p.kernel_overhead_s * 1e6) * 1e-6;
  p.sram_reserved_fraction = root.non_negative_or("sram_reserved_fraction", p.sram_reserved_fraction);
  if (p.sram_reserved_fraction >= 1)
    root.fail("sram_reserved_fraction", "must be below 1 (the share of SRAM the runtime keeps for itself)");
  p.stream_prefetch_blocks =
      static_cast<int>(root.positive_integer_or("stream_prefetch_blocks", p.stream_prefetch_blocks));
  p.update_efficiency = root.fraction_or("update_efficiency", p.update_efficiency);
  p.provenance = read_provenance(root);
  root.reject_unknown_keys();
  return p;
}

}  // namespace podsim::calibration
