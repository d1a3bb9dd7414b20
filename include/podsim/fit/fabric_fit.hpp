// Fabric calibration from nccl-tests logs: the few parameters podsim's collective model uses (achieved
// fraction of each link class's bandwidth, per-step latency per link class, launch latency), plus a
// per-collective, per-size-range summary of what was measured and how well the model reproduces it.
//
// podsim times a collective on an idle network as
//   launch + steps x step_latency[latency class] + route latency + bytes on the busiest link / (nominal x
//   link_efficiency[class of that link]),
// so a log is interpreted through the geometry of the same collective on the topology it ran on (how many
// steps, which link bounds it, what busbw 100% efficiency would give). collective_geometry.hpp computes
// that geometry with podsim's network model; this file only fits.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "podsim/calibration/fabric_profile.hpp"
#include "podsim/fit/fit_error.hpp"
#include "podsim/fit/nccl_tests_log.hpp"

namespace podsim::calibration {

struct CollectiveGeometry {
  std::string bandwidth_class;  // link class of the most loaded link
  double ideal_busbw = 0;       // busbw podsim predicts at 100% link efficiency and zero latency, bytes/s
  double steps = 0;             // algorithm steps the collective pays step latency for
  std::string latency_class;    // link class whose step latency those steps pay
  std::vector<std::string> other_classes;  // other link classes the route crosses (podsim charges the
                                           // largest step latency on a route, so these must not exceed
                                           // the latency class's)
  double wire_latency = 0;                 // route latency, seconds
  double bus_factor = 1;                   // nccl-tests busbw / algbw for this collective and rank count
};

struct RangeFit {
  MeasuredRange summary;
  int points = 0;
  ErrorSummary model_error;  // podsim with the fitted profile vs the measured times in the range
};

struct CollectiveFit {
  const NcclTestsLog* log = nullptr;
  CollectiveGeometry geometry;
  double efficiency = 0;  // large-message busbw / ideal busbw, this log alone (0: no bandwidth-bound range)
  double latency = 0;     // smallest-size latency (Hockney alpha of the first range), seconds
  std::vector<RangeFit> ranges;
  ErrorSummary model_error;
};

struct FabricFitOptions {
  // Size ranges reported per collective (bytes); roughly where NCCL moves from its low-latency protocols
  // to its bandwidth protocol on NVLink and InfiniBand systems.
  std::vector<double> range_bounds = {64.0 * 1024, 16.0 * 1024 * 1024};
  std::string name;  // profile name; "" = derived from the logs
};

struct FabricFitResult {
  FabricProfile profile;
  std::vector<CollectiveFit> collectives;
  std::vector<std::string> notes;  // what was fitted, what was kept from the base profile and why
};

// Podsim's time for `bytes` of log `index` under `profile`. The default evaluates the formula above from
// the geometry; import_nccl_tests passes podsim's network model itself.
using CollectivePredictor = std::function<double(size_t index, double bytes, const FabricProfile& profile)>;

double geometry_time(const CollectiveGeometry& g, double bytes, const FabricProfile& profile);

// logs[i] was measured on geometry[i]. Link classes not measured keep the base profile's values.
// Throws InputError when no log can be used (e.g. every log has a single rank).
FabricFitResult fit_fabric_profile(const std::vector<NcclTestsLog>& logs,
                                   const std::vector<CollectiveGeometry>& geometry, const FabricProfile& base,
                                   const FabricFitOptions& options = {},
                                   const CollectivePredictor& predict = {});

}  // namespace podsim::calibration
