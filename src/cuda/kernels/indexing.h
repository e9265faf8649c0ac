#pragma once
// The interface of the indexing kernels (indexing.cu): gather and scatter along one dim,
// scatter_reduce, advanced indexing through a table of element offsets, searchsorted and nonzero.
// Plain structs only, as launch.h. Most kernels walk a Geometry from launch_args whose operands
// are views made for the purpose (zero strides along the indexed dim), so that one element offset
// per operand locates the index, the source and the row of the indexed tensor together.
#include "cuda/kernels/launch.h"

#include <cstdint>

namespace kiln::cuda::kernels {

// Where a kernel records an out-of-range index, in device memory zeroed before the launch. The
// kernel skips that element instead of trapping (a trap would leave the context unusable); the
// host copies the record back after the launch and raises.
struct IndexFault {
  unsigned long long flagged;  // 0 until an index is out of range
  int64_t value;               // one of the out-of-range indices (whichever thread came first)
  int64_t dim;                 // the dim it indexes
  int64_t size;                // that dim's size
};

// The dim an index walks: its number (for the error), its size and its stride in elements.
struct IndexedDim {
  int64_t dim = 0;
  int64_t size = 0;
  int64_t stride = 0;
};

// Over index's shape, index int64 in [0, size): out[o0] = self[o2 + index[o1] * stride], where
// operand 2 is self with its stride along dim set to 0.
void gather(const Geometry& g, const Operand& out, const Operand& index, const Operand& self,
            IndexedDim d, IndexFault* fault, cudaStream_t stream);

// Over index's shape: target[o0 + index[o1] * stride] = src[o2] (target's stride along dim set
// to 0 in operand 0). Duplicate indices leave one of their values (which one is unspecified).
void scatter(const Geometry& g, const Operand& target, const Operand& index, const Operand& src,
             IndexedDim d, IndexFault* fault, cudaStream_t stream);

enum class ScatterReduce : int { Sum, Prod, Mean, Amax, Amin };

// As scatter, writing the reduction's identity (0, 1, the lowest or the highest value) instead
// of src: include_self=False starts the positions that receive values from it.
void scatter_fill_identity(const Geometry& g, const Operand& target, const Operand& index,
                           ScatterReduce reduce, IndexedDim d, IndexFault* fault,
                           cudaStream_t stream);
// As scatter, combining atomically: target[p] = reduce(target[p], src[o2]). With `counts` (one
// int64 per element of a contiguous target), counts[p] += 1 as well (mean's divisor).
void scatter_reduce(const Geometry& g, const Operand& target, const Operand& index,
                    const Operand& src, ScatterReduce reduce, int64_t* counts, IndexedDim d,
                    IndexFault* fault, cudaStream_t stream);
// Over n contiguous elements: target[i] /= counts[i] + include_self where that exceeds 1
// (integers round toward -inf, as the CPU kernel).
void scatter_mean_divide(ScalarType type, void* target, const int64_t* counts, int64_t n,
                         bool include_self, cudaStream_t stream);

// Over the broadcast index shape: offsets[o0] += v * stride for v = index[o1] (int64 or int32),
// negative v counting from the end. An index outside [-size, size) adds nothing.
void add_index_offsets(const Geometry& g, const Operand& offsets, const Operand& index,
                       IndexedDim d, IndexFault* fault, cudaStream_t stream);
// out[o0] = self[o1 + offsets[o2]] (offsets int64).
void gather_at_offsets(const Geometry& g, const Operand& out, const Operand& self,
                       const Operand& offsets, cudaStream_t stream);
// target[o0 + offsets[o1]] = values[o2], or += atomically with accumulate (duplicates then sum,
// in an unspecified order; without it one of their values stays).
void put_at_offsets(const Geometry& g, const Operand& target, const Operand& offsets,
                    const Operand& values, bool accumulate, cudaStream_t stream);

// searchsorted over contiguous operands of one type.
struct SearchArgs {
  ScalarType type = ScalarType::Float32;
  const void* boundaries = nullptr;  // rows of `length` sorted values (or sorted via sorter)
  const void* values = nullptr;      // `count` values
  const int64_t* sorter = nullptr;   // optional: per row, the order of the boundaries
  void* out = nullptr;               // `count` positions, int32 or int64
  bool out_int32 = false;
  int64_t count = 0;
  int64_t length = 0;
  int64_t values_per_row = 0;  // values sharing a row of boundaries; 0: one row for all
  bool right = false;          // upper bound (the first boundary above the value)
};
// An out-of-range sorter entry ends its search early: check the sorter with check_in_range.
void searchsorted(const SearchArgs& a, cudaStream_t stream);
// Records in `fault` an entry of data[0 .. count) outside [0, size).
void check_in_range(const int64_t* data, int64_t count, int64_t size, IndexFault* fault,
                    cudaStream_t stream);

// nonzero in two passes over chunks of the elements in row-major order: count per chunk (with
// a prefix sum), then write each nonzero's coordinates at its rank.
inline constexpr int kMaxNonzeroDims = 64;
struct NonzeroShape {
  int ndim = 0;
  int64_t sizes[kMaxNonzeroDims] = {};
};
// The length of the chunk table for numel elements: nonzero_count fills chunks + 1 entries.
int64_t nonzero_chunks(int64_t numel);
// chunk_starts[c] = the nonzeros before chunk c; chunk_starts[chunks] = their total. self is
// operand 0 of g (launch_args over self alone: merged dims keep the row-major order).
void nonzero_count(const Geometry& g, const Operand& self, int64_t* chunk_starts,
                   cudaStream_t stream);
// out[r * ndim + d] = coordinate d (over `shape`, self's sizes) of the r-th nonzero element.
void nonzero_write(const Geometry& g, const Operand& self, const NonzeroShape& shape,
                   const int64_t* chunk_starts, int64_t* out, cudaStream_t stream);

}  // namespace kiln::cuda::kernels
