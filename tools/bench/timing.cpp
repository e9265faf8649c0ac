#include "timing.h"

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

int batch_size(const TimingOptions& options, double single_s) {
  if (options.iters) return std::max(1, *options.iters);
  const double needed = options.min_time_s / std::max(single_s, 1e-9);
  return static_cast<int>(std::clamp(std::ceil(needed), 1.0, 1e8));
}

double ms_per_iteration(const std::function<std::vector<Tensor>()>& fn, int iters) {
  return seconds_of([&] {
           for (int i = 0; i < iters; ++i) fn();
         }) *
         1e3 / iters;
}

}  // namespace

InterleavedTimes time_interleaved(
    const Step& step, const TimingOptions& options, double single_eager_s, double single_compiled_s,
    const std::function<void(int repeat, const InterleavedTimes& batches)>& on_repeat) {
  InterleavedTimes times;
  times.eager_iters = batch_size(options, single_eager_s);
  times.compiled_iters = batch_size(options, single_compiled_s);
  std::vector<double> eager, compiled;
  for (int r = 0; r < std::max(1, options.repeats); ++r) {
    on_repeat(r, times);
    eager.push_back(ms_per_iteration(step.eager, times.eager_iters));
    compiled.push_back(ms_per_iteration(step.compiled, times.compiled_iters));
  }
  times.eager_ms = median(eager);
  times.compiled_ms = median(compiled);
  return times;
}

}  // namespace kiln_bench
