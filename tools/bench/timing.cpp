#include "timing.h"

#include <kiln/core/allocator.h>
#include <kiln/cuda/cuda.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln_bench {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

constexpr double kMiB = 1024.0 * 1024.0;

// The peak of the CPU allocator during fn(); unset on a GPU (see InterleavedTimes).
template <typename Fn>
std::optional<double> peak_mb_of(kiln::Device device, Fn&& fn) {
  if (device.is_cuda()) {
    const size_t before = kiln::cuda::memory_allocated();
    kiln::cuda::reset_peak_memory_stats();
    fn();
    const size_t peak = kiln::cuda::max_memory_allocated();
    return static_cast<double>(peak > before ? peak - before : 0) / kMiB;
  }
  if (!device.is_cpu()) {
    fn();
    return std::nullopt;
  }
  const size_t before = kiln::cpu_allocator_stats().allocated_bytes;
  kiln::reset_cpu_allocator_peak();
  fn();
  const size_t peak = kiln::cpu_allocator_stats().peak_allocated_bytes;
  return static_cast<double>(peak > before ? peak - before : 0) / kMiB;
}

int batch_size(const TimingOptions& options, double single_s) {
  if (options.iters) return std::max(1, *options.iters);
  const double needed = options.min_time_s / std::max(single_s, 1e-9);
  return static_cast<int>(std::clamp(std::ceil(needed), 1.0, 1e8));
}

// Iterations run back to back (on a GPU the host queues the next while the device works, as a
// training loop does); the device is waited for once, at the end of the batch.
// `side` names the batch's NVTX range ("kiln_eager", "kiln_compiled"), which a profiler can
// filter on (bench/device/run_cuda_tests.sh profile).
double ms_per_iteration(kiln::Device device, const char* side,
                        const std::function<std::vector<Tensor>()>& fn, int iters) {
  const kiln::cuda::ProfileRange range(side);
  return seconds_of(device,
                    [&] {
                      for (int i = 0; i < iters; ++i) fn();
                    }) *
         1e3 / iters;
}

}  // namespace

void wait_for(kiln::Device device) {
  if (device.is_cuda()) kiln::cuda::synchronize(device.has_index() ? device.index() : -1);
}

InterleavedTimes time_interleaved(
    const Step& step, kiln::Device device, const TimingOptions& options, double single_eager_s,
    double single_compiled_s,
    const std::function<void(int repeat, const InterleavedTimes& batches)>& on_repeat) {
  InterleavedTimes times;
  times.eager_iters = batch_size(options, single_eager_s);
  times.compiled_iters = batch_size(options, single_compiled_s);
  std::vector<double> eager, compiled;
  for (int r = 0; r < std::max(1, options.repeats); ++r) {
    on_repeat(r, times);
    const auto eager_batch = [&] {
      eager.push_back(ms_per_iteration(device, "kiln_eager", step.eager, times.eager_iters));
    };
    const auto compiled_batch = [&] {
      compiled.push_back(
          ms_per_iteration(device, "kiln_compiled", step.compiled, times.compiled_iters));
    };
    if (r == 0) {
      times.eager_peak_mb = peak_mb_of(device, eager_batch);
      times.compiled_peak_mb = peak_mb_of(device, compiled_batch);
    } else {
      eager_batch();
      compiled_batch();
    }
  }
  times.eager_ms = median(eager);
  times.compiled_ms = median(compiled);
  return times;
}

}  // namespace kiln_bench
