#pragma once
// The kernels of the scans, sorts and arg-reductions (cumsum/cumprod, sort, topk, argmax/argmin,
// unique): plain declarations, as launch.h. Every op works on rows: the host moves the op's dim
// last and makes the input contiguous, so that row r is elements [r * n, (r + 1) * n).
#include "cuda/cuda_check.h"
#include "cuda/kernels/launch.h"

#include <cstddef>
#include <cstdint>

namespace kiln::cuda::kernels {

// Device memory for one op's temporaries (CUB's temporary storage, keys, partial results), from
// the caller's allocator; valid until the op returns, for work queued on the op's stream.
class Workspace {
 public:
  virtual void* bytes(size_t n) = 0;

 protected:
  ~Workspace() = default;
};

// Runs a CUB call (temp, bytes) twice: for the size of its temporary storage, then with that
// storage from `ws`.
template <typename F>
void with_temp_storage(Workspace& ws, F&& call) {
  size_t bytes = 0;
  KILN_CUDA_CHECK(call(static_cast<void*>(nullptr), bytes));
  KILN_CUDA_CHECK(call(ws.bytes(bytes > 0 ? bytes : 1), bytes));
}

// Inclusive sums (or products) along rows; `type` is Float32 (accumulated in double, as the CPU
// does), Float64 or Int64.
void scan_rows(ScalarType type, const void* in, void* out, int64_t rows, int64_t n, bool prod,
               Workspace& ws, cudaStream_t stream);

// out[r] = the index in row r of its largest (smallest) element: the first one, a NaN counting as
// the extreme. n > 0.
void arg_reduce_rows(ScalarType type, const void* in, int64_t* out, int64_t rows, int64_t n,
                     bool largest, Workspace& ws, cudaStream_t stream);

// Sorts every row stably (NaN greatest): indices[r * n + j] is the position in row r of its j-th
// element in order, values (may be null) the elements.
void sort_rows(ScalarType type, const void* in, void* values, int64_t* indices, int64_t rows,
               int64_t n, bool descending, Workspace& ws, cudaStream_t stream);

// The k largest (smallest) elements of every row, values and positions [rows, k], in the order
// the CPU kernel's selection leaves them (sorted or not). 0 < k <= n.
void topk_rows(ScalarType type, const void* in, void* values, int64_t* indices, int64_t rows,
               int64_t n, int64_t k, bool largest, bool sorted, Workspace& ws, cudaStream_t stream);

// unique, in two steps around the host's allocation of outputs. The items are the n elements of
// `in` (width 1) or its n rows of `width` elements, sorted stably (lexicographically for rows,
// NaN greatest); equal items (==, so NaNs are all distinct) form a group. The first step writes
// `order` (the items' positions in sorted order) and `group` (the group of the i-th item in
// order, from 1) and returns the number of groups, which synchronizes the stream.
int64_t unique_groups(ScalarType type, const void* in, int64_t n, int64_t width, int64_t* order,
                      int64_t* group, Workspace& ws, cudaStream_t stream);
// values[g] = the first item of group g (m groups); inverse[order[i]] = group of item i (may be
// null); counts[g] = items in group g (may be null).
void unique_outputs(ScalarType type, const void* in, int64_t n, int64_t width, int64_t m,
                    const int64_t* order, const int64_t* group, void* values, int64_t* inverse,
                    int64_t* counts, Workspace& ws, cudaStream_t stream);

}  // namespace kiln::cuda::kernels
