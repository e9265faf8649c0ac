#pragma once
// Wall-clock timing of eager and compiled steps, interleaved (eager batch, compiled batch, eager
// batch, ...) so that machine drift affects both alike; medians over repeats. On a GPU, kernels
// run after the host has queued them: the clock stops only once the device has finished.
#include <kiln/core/device.h>

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

// Waits until `device` has finished the work queued on it (nothing to wait for on the CPU).
void wait_for(kiln::Device device);

// Seconds taken by fn(), including the device work it queued: the clock starts once earlier work
// has finished and stops once fn's has.
template <typename Fn>
double seconds_of(kiln::Device device, Fn&& fn) {
  wait_for(device);
  const auto start = std::chrono::steady_clock::now();
  fn();
  wait_for(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct InterleavedTimes {
  double eager_ms = 0, compiled_ms = 0;     // medians per iteration
  int eager_iters = 0, compiled_iters = 0;  // per batch
  // The allocator's high-water mark during the first batch of each side above what was allocated
  // before it: the memory a step needs on top of the weights, inputs and optimizer state that
  // already exist (measured while timing, so that it costs no extra step). Unset on a GPU:
  // kiln::cuda's caching allocator reports no high-water mark.
  std::optional<double> eager_peak_mb, compiled_peak_mb;
};

// Times both sides of a warmed-up step on `device` and measures their peak memory.
// `single_eager_s` / `single_compiled_s`: one warm call each, to size the batches. `on_repeat`
// reports progress before each repeat.
InterleavedTimes time_interleaved(
    const Step& step, kiln::Device device, const TimingOptions& options, double single_eager_s,
    double single_compiled_s,
    const std::function<void(int repeat, const InterleavedTimes& batches)>& on_repeat);

}  // namespace kiln_bench
