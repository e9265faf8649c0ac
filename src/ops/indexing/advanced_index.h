#pragma once
// Advanced indexing (self[i0, i1, ...] with index tensors, boolean masks and full slices), shared
// by index.Tensor and index_put: the indices are reduced to one table of element offsets into
// self, so reading (index) and writing (index_put) are a single gather/scatter over the result.
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::ops::indexing {

// Raises kiln::Error saying that op's output shape depends on the input values, so it cannot be
// computed without data (on the meta device, or while tracing shapes).
[[noreturn]] void fail_data_dependent(const char* op);

// Checks the index list against self from metadata alone: index dtypes (kiln::TypeError), the
// number of indexed dims (kiln::IndexError) and mask shapes against the dims they cover.
void check_indices(const Tensor& self, TensorList indices, const char* op);

// Checks the index list against self (dtypes, rank, mask shapes) and replaces every boolean or
// uint8 mask by the int64 coordinates of its true entries, one tensor per masked dim. The result
// has one entry per dim of self; undefined entries are full slices. Masks need data: on the meta
// device they raise (fail_data_dependent).
std::vector<Tensor> expand_indices(const Tensor& self, TensorList indices, const char* op);

// Where self[indices] takes its elements from, for expanded indices (one per dim of self).
struct IndexPlan {
  DimVector result_sizes;        // the shape of self[indices]
  DimVector self_strides;        // per result dim: self's stride there (0 on index dims)
  DimVector offset_strides;      // per result dim: stride into `offsets` (0 on sliced dims)
  DimVector index_shape;         // the broadcast shape of the index tensors
  std::vector<int64_t> offsets;  // per index position: element offset into self (filled by
                                 // compute_offsets; empty for a plan made from metadata)
};

// The result geometry: the broadcast index dims replace the indexed dims in place when those are
// adjacent, and go first otherwise (PyTorch's rule). `self_strides` are the strides of the tensor
// the plan will address (self, or index_put's output).
IndexPlan plan_index(IntList self_sizes, IntList self_strides, const std::vector<Tensor>& indices,
                     const char* op);

// plan_index's result_sizes from metadata alone, symbolic sizes allowed (the meta function's).
SymDimVector index_result_sizes(SymIntList self_sizes, const std::vector<Tensor>& indices,
                                const char* op);

// Fills plan.offsets from the index values (negative values wrap; out of range raises
// kiln::IndexError naming the value, the dim and its size).
void compute_offsets(IndexPlan& plan, IntList self_sizes, IntList self_strides,
                     const std::vector<Tensor>& indices, const char* op);

// out (contiguous, plan.result_sizes, self's dtype) = self[indices].
void gather_indexed(const Tensor& out, const Tensor& self, const IndexPlan& plan);

// target[indices] = values (or += with accumulate, serially in row-major order so duplicates
// sum deterministically). values is already broadcast to plan.result_sizes (any strides) and has
// target's dtype; plan was made with target's strides.
void put_indexed(const Tensor& target, const Tensor& values, const IndexPlan& plan,
                 bool accumulate);

}  // namespace kiln::ops::indexing
