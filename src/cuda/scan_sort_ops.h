#pragma once
// Shared by the CUDA slots of the scans, sorts, arg-reductions and unique (scan_ops.cpp,
// sort_ops.cpp, arg_reduce_ops.cpp, unique_ops.cpp): a tensor seen as rows along one dim, the
// way back into the op's outputs, and the kernels' Workspace from the caching allocator.
#include "cuda/kernels/scan_sort.h"

#include <kiln/core/tensor.h>

#include <vector>

namespace kiln::cuda {

// The rows of `x` along `dim`: dim moved last and the data made contiguous (x itself when it
// already is), so that row r is elements [r * length, (r + 1) * length). A 0-dim tensor is one
// row of one element.
struct Rows {
  Tensor data;
  std::vector<int64_t> perm;  // x's dims in data's order
  int64_t count = 1;
  int64_t length = 1;
};
Rows rows_along(const Tensor& x, int64_t dim);

// Where a kernel writes rows that belong in `out`, whose dims are in the order `perm` gives (as
// Rows::perm): out itself when it is laid out that way already, with `dtype`; else a contiguous
// temporary, which commit() copies (converting) into out.
Tensor row_target(const Tensor& out, const std::vector<int64_t>& perm, DType dtype);
void commit(const Tensor& out, const std::vector<int64_t>& perm, const Tensor& target);

// Temporaries as CUDA uint8 tensors from the caching allocator, freed when this goes: work
// queued on the stream before then still finds them, as a freed block is reused only by later
// work on the same stream.
class DeviceWorkspace final : public kernels::Workspace {
 public:
  explicit DeviceWorkspace(Device device) : device_(device) {}
  void* bytes(size_t n) override;

 private:
  Device device_;
  std::vector<Tensor> blocks_;
};

}  // namespace kiln::cuda
