#pragma once
// The fuzzer's only source of randomness: a seeded engine owned by one generation (never global),
// so that a seed replays a program exactly.
#include <cstdint>
#include <random>
#include <vector>

namespace kiln::fuzz {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // An integer in [lo, hi].
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
  }
  double real(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  bool chance(double p) { return real(0, 1) < p; }
  uint64_t next() { return engine_(); }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(uniform(0, static_cast<int64_t>(items.size()) - 1))];
  }
  // An index drawn with probability proportional to its weight.
  size_t weighted(const std::vector<double>& weights) {
    return std::discrete_distribution<size_t>(weights.begin(), weights.end())(engine_);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kiln::fuzz
