// One point of a sweep as a results row: what `podsim sweep` runs in each worker process.
#pragma once

#include <functional>

#include "podsim/driver/simulation.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"

namespace podsim::driver {

using Simulator = std::function<report::RunResult(const RunRequest&)>;

// Simulates the point and returns its row; never throws. Bad input (InputError) is status `invalid`;
// a configuration that does not fit has the simulator's status (`out_of_memory`); a result that breaks
// physics (InvariantViolation) or any other exception is a bug in podsim, status `failed`, the reason in
// `detail`. `simulator` is a parameter so the tests can make it throw.
study::ResultRow run_point(
    const study::Study& study, const study::Point& point,
    const Simulator& simulator = [](const RunRequest& r) { return simulate(r); });

}  // namespace podsim::driver
