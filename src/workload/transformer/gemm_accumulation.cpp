#include "podsim/workload/transformer/gemm_accumulation.hpp"

namespace podsim::workload {

calibration::ComputeModel gemm_model(const WorkloadConfig& w, const calibration::ComputeModel& cm,
                                     GemmPass pass) {
  bool fast = false;
  switch (w.training.fp8_fast_accumulation) {
    case FastAccumulation::fprop: fast = pass == GemmPass::fprop; break;
    case FastAccumulation::all: fast = true; break;
    case FastAccumulation::none: fast = false; break;
  }
  return fast ? cm : cm.with_split_accumulator();
}

}  // namespace podsim::workload
