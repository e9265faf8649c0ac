#pragma once
// Wall-clock timing of eager and compiled steps, interleaved (eager batch, compiled batch, eager
// batch, ...) so that machine drift affects both alike; medians over repeats.
#include <chrono>
#include <functional>
#include <optional>

#include "case.h"

namespace kiln_bench {

struct TimingOptions {
  std::optional<int> iters;  // iterations per timed batch; unset: enough for min_time
  double min_time_s = 0.5;   // seconds per timed batch when iters is unset
  int repeats = 5;           // timed batches per side; medians are reported
};

// Seconds taken by fn().
template <typename Fn>
double seconds_of(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct InterleavedTimes {
  double eager_ms = 0, compiled_ms = 0;     // medians per iteration
  int eager_iters = 0, compiled_iters = 0;  // per batch
  // The allocator's high-water mark during the first batch of each side above what was allocated
  // before it: the memory a step needs on top of the weights, inputs and optimizer state that
  // already exist (measured while timing, so that it costs no extra step).
  double eager_peak_mb = 0, compiled_peak_mb = 0;
};

// Times both sides of a warmed-up step and measures their peak memory. `single_eager_s` /
// `single_compiled_s`: one warm call each, to size the batches. `on_repeat` reports progress before
// each repeat.
InterleavedTimes time_interleaved(
    const Step& step, const TimingOptions& options, double single_eager_s, double single_compiled_s,
    const std::function<void(int repeat, const InterleavedTimes& batches)>& on_repeat);

}  // namespace kiln_bench
