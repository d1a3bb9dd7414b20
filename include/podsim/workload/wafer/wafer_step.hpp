// What a Cerebras step is alike in both execution modes (layer_pipelined.hpp, weight_streaming.hpp): the
// transformer step the systems run together, and what its optimizer moves per parameter.
#pragma once

#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/wafer/cerebras_config.hpp"
#include "podsim/workload/wafer/wafer_kernels.hpp"

namespace podsim::workload {

// Bytes mixed-precision Adam moves per parameter, wherever it runs (in place in wafer SRAM when layer
// pipelined, in MemoryX when weight streaming): read the fp32 weight, m, v and the accumulated gradient,
// write the three back and the 16-bit weight the next step computes with.
constexpr double kAdamUpdateBytesPerParam = 4 * 4 + 3 * 4 + 2;

// A step plan with what both modes report the same way: one device per system (dp), the tokens, samples
// and FLOPs of the global batch, the wafer's peak and the summary settings.
StepPlan cerebras_step_plan(const CerebrasWorkload& cw, ExecutionMode mode, int micro_batch,
                            const WaferCostModel& cm);

}  // namespace podsim::workload
