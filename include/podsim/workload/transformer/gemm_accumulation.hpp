// Which GEMMs accumulate fast and which with the split fp32 accumulator. Transformer Engine runs its fp8
// GEMMs as its recipes say (transformer_engine/common/recipe/__init__.py Float8CurrentScaling:
// fp8_gemm_fprop use_split_accumulator=False, fp8_gemm_dgrad / fp8_gemm_wgrad True; the module constants
// _2X_ACC_FPROP = False, _2X_ACC_DGRAD = _2X_ACC_WGRAD = True of pytorch/module/base.py for delayed
// scaling and GroupedLinear): the forward with Hopper's fast accumulation, both backward GEMMs with the
// split one, whose cost is the device profile's gemm.split_accumulator_efficiency (device_profile.hpp).
// torchao's float8 training makes the same choice (Float8GemmConfig use_fast_accum on the output GEMM only).
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/names.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

enum class GemmPass { fprop, dgrad, wgrad };

// The compute model a Transformer Engine GEMM of this pass is costed with: `cm` itself when the workload's
// training.fp8_fast_accumulation lets the pass accumulate fast, cm.with_split_accumulator() otherwise.
// Wgrad and dgrad share one answer (every setting treats them alike), so a backward pass asks once.
calibration::ComputeModel gemm_model(const WorkloadConfig& w, const calibration::ComputeModel& cm,
                                     GemmPass pass);

}  // namespace podsim::workload
