#pragma once
// Checks and index reading shared by the indexing ops.
#include <kiln/ops/registry.h>

#include <string>
#include <vector>

namespace kiln::ops::indexing {

// Raises kiln::TypeError unless index is int64 (or int32 when allow_int32), naming op.
void check_index_dtype(const Tensor& index, bool allow_int32, const char* op);

// Raises kiln::IndexError "op(): index 7 is out of bounds for dimension 0 with size 5" unless
// 0 <= value < size.
[[noreturn]] void fail_out_of_bounds(int64_t value, int64_t dim, int64_t size, const char* op);
inline void check_in_bounds(int64_t value, int64_t dim, int64_t size, const char* op) {
  if (value < 0 || value >= size) [[unlikely]]
    fail_out_of_bounds(value, dim, size, op);
}

// "[2, 3]": a tensor's sizes for error messages.
std::string sizes_of(const Tensor& t);

// PyTorch's scatter shape and dtype rules (scatter, scatter_add, scatter_reduce); src is
// undefined for the value overloads.
void check_scatter(const Tensor& self, int64_t raw_dim, const Tensor& index, const Tensor& src,
                   const char* op);

// The values of an int64 or int32 index tensor of any layout in row-major order, each
// bounds-checked against size along dim.
std::vector<int64_t> read_indices(const Tensor& index, int64_t dim, int64_t size, const char* op);

// A tensor's size along d with 0-dim tensors counting as [1] (PyTorch's ensure_nonempty_size).
inline int64_t nonempty_size(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }
inline int64_t nonempty_dim(const Tensor& t) { return t.dim() == 0 ? 1 : t.dim(); }
// The tensor itself, or a 1-D view of a 0-dim one.
inline Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

}  // namespace kiln::ops::indexing
