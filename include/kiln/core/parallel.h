#pragma once
// One intra-op thread pool (OpenMP) for eager kernels and generated code alike.
#include <cstdint>
#include <functional>

namespace kiln {

void set_num_threads(int n);
int get_num_threads();
// True inside a parallel region (nested parallel_for then runs serially).
bool in_parallel_region();

// Calls f(begin, end) over [begin, end) split into contiguous chunks across the pool; chunks are
// at least grain_size long, so small ranges run inline on the caller's thread.
void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& f);

// Elements below which elementwise kernels stay on one thread (PyTorch's GRAIN_SIZE).
inline constexpr int64_t kGrainSize = 32768;

}  // namespace kiln
