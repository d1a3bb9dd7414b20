// Key popularity of sparse features under a Zipf law, and the expectations a parameter server needs.
//
// Key i (rank 1 = most popular) of N is drawn with probability p_i = i^-s / H(N, s), H(N, s) = sum_j j^-s.
// Draws are independent (a batch's examples are a random sample of the traffic), so among M draws:
// - key i appears at least once with probability 1 - (1 - p_i)^M, hence the expected number of distinct
//   keys is U(M) = sum_i [1 - (1 - p_i)^M]: the keys a batch must find, load and move;
// - a cache holding the C most popular keys (what an LFU-like hot-key cache converges to) serves the
//   fraction head_mass(C) = sum_{i<=C} p_i of all draws, and sum_{i<=C} [1 - (1 - p_i)^M] of the distinct
//   keys; the rest must come from the tier below.
// N reaches 1e11 and more, so sums are evaluated exactly over the first kExactRanks ranks and as integrals
// beyond, where the summand is smooth in the rank: sum_{i=a}^{b} f(i) = integral_{a-1/2}^{b+1/2} f(x) dx
// (midpoint rule; its error, f''/24 per term, is below 1e-9 relative there). The integral is taken over
// log x with composite Simpson. Tests compare all of it with Monte Carlo sampling.
#pragma once

namespace podsim::workload {

class ZipfKeys {
 public:
  // keys >= 1 (need not be an integer below 2^53 exactly; ranks are treated as reals beyond kExactRanks);
  // exponent >= 0 (0 = uniform popularity). Throws std::invalid_argument otherwise.
  ZipfKeys(double keys, double exponent);

  double keys() const { return keys_; }
  double exponent() const { return exponent_; }
  double probability(double rank) const;  // p_rank

  // Fraction of draws that fall on ranks 1..c (the access hit rate of a cache of the c hottest keys).
  double head_mass(double c) const;
  // Expected distinct keys among `draws` draws, counting only ranks first..last (inclusive).
  double expected_unique(double draws, double first, double last) const;
  double expected_unique(double draws) const { return expected_unique(draws, 1, keys_); }

  static constexpr double kExactRanks = 65536;

 private:
  double harmonic(double a, double b) const;  // sum_{i=a}^{b} i^-s
  double keys_, exponent_, norm_;
};

}  // namespace podsim::workload
