#pragma once
// TensorIterator: the engine behind elementwise and reduction kernels. It broadcasts operands,
// computes byte strides, orders dims fastest-first by the output's layout, coalesces dims that
// are contiguous across all operands, and runs a 2-D inner loop over chunks of the iteration
// space, in parallel when large.
//
// Operands arrive in the dtype the kernel computes in: the iterator converts inputs whose dtype
// differs up front, and writes through a temporary when an output's dtype differs from the
// kernel's output dtype, so kernels see a single C++ type per operand.
#include <kiln/core/parallel.h>
#include <kiln/core/tensor.h>

#include <functional>
#include <span>
#include <vector>

namespace kiln::ops {

// loop(data, strides, size0, size1): data[i] points at operand i's first element; strides holds
// ntensors inner (dim 0) byte strides followed by ntensors outer (dim 1) byte strides.
using Loop2d =
    std::function<void(char** data, const int64_t* strides, int64_t size0, int64_t size1)>;

class TensorIterator;

class TensorIteratorConfig {
 public:
  TensorIteratorConfig& add_output(const Tensor& t);
  TensorIteratorConfig& add_input(const Tensor& t);
  // Inputs are converted to this dtype before the loop (default: no conversion; all inputs must
  // then share one dtype).
  TensorIteratorConfig& compute_dtype(DType d);
  // The dtype the kernel writes (default: compute_dtype). Outputs of another dtype get a cast.
  TensorIteratorConfig& output_dtype(DType d);
  // Reduction: outputs keep size 1 (or stride 0) on reduced dims; inputs define the shape.
  TensorIteratorConfig& is_reduction(bool r);
  TensorIteratorConfig& op_name(const char* name);
  TensorIterator build();

 private:
  friend class TensorIterator;
  std::vector<Tensor> outputs_, inputs_;
  std::optional<DType> compute_dtype_, output_dtype_;
  bool is_reduction_ = false;
  const char* op_name_ = "op";
};

class TensorIterator {
 public:
  int ntensors() const { return static_cast<int>(operands_.size()); }
  int noutputs() const { return noutputs_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const;
  const DimVector& shape() const { return shape_; }
  // Byte strides of operand i, one per (reordered, coalesced) dim.
  IntList strides(int i) const { return strides_[static_cast<size_t>(i)]; }
  char* data(int i) const { return data_[static_cast<size_t>(i)]; }
  DType dtype(int i) const { return operands_[static_cast<size_t>(i)].dtype(); }
  const Tensor& operand(int i) const { return operands_[static_cast<size_t>(i)]; }
  // True when every operand is contiguous along the whole (coalesced, 1-D) space.
  bool is_contiguous() const;
  // Whether dim d (reordered) is reduced: the output has stride 0 there.
  bool is_reduced_dim(int d) const;

  // Runs loop over the whole space, split across threads when numel >= grain_size.
  void for_each(const Loop2d& loop, int64_t grain_size = kGrainSize);
  // Runs loop over linear indices [begin, end) of the iteration space.
  void serial_for_each(const Loop2d& loop, int64_t begin, int64_t end) const;
  // Copies temporaries back into outputs whose dtype differed; call after the loop.
  void finish();

 private:
  friend class TensorIteratorConfig;
  void compute_shape(const TensorIteratorConfig& config);
  void compute_strides_and_reorder();
  void coalesce();

  std::vector<Tensor> operands_;          // outputs first
  std::vector<Tensor> original_outputs_;  // where temporaries are copied back (else undefined)
  std::vector<DimVector> strides_;
  std::vector<char*> data_;
  DimVector shape_;
  int noutputs_ = 0;
  bool is_reduction_ = false;
  const char* op_name_ = "op";
};

// The broadcast shape of sizes a and b; raises kiln::Error naming op if they cannot broadcast.
DimVector broadcast_shapes(IntList a, IntList b, const char* op);
SymDimVector broadcast_sym_shapes(SymIntList a, SymIntList b, const char* op);

// Strides for an output of `sizes` that follows the memory layout of `like` (dims ordered as
// like's strides order them; broadcast inputs considered), as PyTorch's TensorIterator does.
SymDimVector layout_following_strides(SymIntList sizes, std::span<const Tensor> like);

}  // namespace kiln::ops
