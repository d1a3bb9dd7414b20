// Transformer Engine's userbuffers overlap of a GEMM with its tensor-parallel collective (tp_overlap.hpp).
#include "tp_overlap_ops.hpp"

#include <algorithm>
#include <cmath>

namespace podsim::workload {
namespace {

using network::CollectiveKind;

// The chunks a GEMM runs as.
double chunks(const Userbuffers& ub, const UbOverlap& o) {
  switch (o.method) {
    case UbMethod::ring_exchange: return o.aggregate ? std::max(1, ub.tp / 2) : ub.tp;
    case UbMethod::pipeline: return std::max(1, o.num_splits);
    case UbMethod::bulk:
    default: return 1;
  }
}

// SMs the communication kernel holds beside the GEMM: ring exchange copies run on the copy engines (TE's
// use_ce) unless its SM margin is set; a pipelined or bulk transfer runs num_sm SMs of reduction /
// copy kernels whether or not the GEMM was launched with the margin.
int held_sms(const UbOverlap& o) {
  if (o.method == UbMethod::ring_exchange) return o.set_sm_margin ? o.num_sm : 0;
  return o.num_sm;
}

}  // namespace

Userbuffers userbuffers_of(const WorkloadConfig& w) {
  const auto& p = w.parallel;
  if (!p.tp_overlap || p.tp <= 1 || !p.sequence_parallel) return {};
  return {&p.tp_overlap_gemms, p.tp};
}

OpCost ub_gemm(const calibration::ComputeModel& cm, const char* name, const Userbuffers& ub, UbGemm g,
               double m, double n, double k) {
  if (!ub) return gemm_cost(cm, name, m, n, k);
  const UbOverlap& o = (*ub.gemms)[g];
  double c = chunks(ub, o);
  const calibration::ComputeModel narrowed = cm.without_sms(held_sms(o));
  OpCost one = gemm_cost(narrowed, name, std::ceil(m / c), n, k);
  // The chunks' FLOPs are the whole GEMM's; ceil(m / c) rows per chunk is what each kernel runs.
  return OpCost{name, true, 2 * m * n * k, 0, one.seconds * c};
}

TpCollective ub_collective(CollectiveKind kind, double bytes, double gemm_seconds, const Userbuffers& ub,
                           UbGemm g, bool mlp) {
  TpCollective c{kind, bytes, gemm_seconds};
  c.mlp = mlp;
  if (!ub) return c;
  const UbOverlap& o = (*ub.gemms)[g];
  double n = chunks(ub, o);
  bool gathers = kind == CollectiveKind::all_gather;
  c.sm_costed = true;
  switch (o.method) {
    case UbMethod::bulk:  // the whole transfer beside the whole GEMM
      c.exposed_share = 0, c.window_share = 1;
      break;
    case UbMethod::ring_exchange:
      // All-gather: the local chunk computes first while it is sent on, and every received chunk's GEMM
      // hides the next transfer; nothing waits but the window is (n-1)/n of the GEMM. Reduce-scatter: the
      // last chunk's partial sums leave after its GEMM.
      c.exposed_share = gathers ? 0 : 1 / n, c.window_share = (n - 1) / n;
      break;
    case UbMethod::pipeline:
    default:
      // The first chunk's all-gather before any GEMM, or the last chunk's reduce-scatter after all.
      c.exposed_share = 1 / n, c.window_share = (n - 1) / n;
      break;
  }
  return c;
}

}  // namespace podsim::workload
