#include <kiln/core/error.h>
#include <kiln/core/parallel.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace kiln {

void set_num_threads(int n) {
  KILN_CHECK(n > 0, "set_num_threads: expected a positive number of threads, got {}", n);
  omp_set_num_threads(n);
}

int get_num_threads() { return in_parallel_region() ? 1 : omp_get_max_threads(); }

bool in_parallel_region() { return omp_in_parallel() != 0; }

void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  int64_t range = end - begin;
  int64_t max_chunks = grain_size > 0 ? (range + grain_size - 1) / grain_size : range;
  int nthreads = static_cast<int>(std::min<int64_t>(get_num_threads(), max_chunks));
  if (nthreads <= 1 || in_parallel_region()) {
    f(begin, end);
    return;
  }
  // Exceptions must not cross the OpenMP region: keep the first and rethrow it after.
  std::exception_ptr error;
  std::atomic_flag has_error = ATOMIC_FLAG_INIT;
#pragma omp parallel num_threads(nthreads)
  {
    int tid = omp_get_thread_num();
    int n = omp_get_num_threads();
    int64_t chunk = (range + n - 1) / n;
    int64_t b = begin + tid * chunk;
    int64_t e = std::min(end, b + chunk);
    if (b < e) {
      try {
        f(b, e);
      } catch (...) {
        if (!has_error.test_and_set()) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
