#include "ops/iterator/tensor_iterator.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <algorithm>
#include <numeric>

namespace kiln::ops {

// ---------------------------------------------------------------- shapes

DimVector broadcast_shapes(IntList a, IntList b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    KILN_CHECK(da == db || da == 1 || db == 1,
               "{}: the size of tensor a ({}) must match the size of tensor b ({}) at "
               "non-singleton dimension {} (shapes [{}] and [{}])",
               op, da, db, i, fmt::join(a, ", "), fmt::join(b, ", "));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

SymDimVector broadcast_sym_shapes(SymIntList a, SymIntList b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  SymDimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    SymInt da = i < n - a.size() ? SymInt(1) : a[i - (n - a.size())];
    SymInt db = i < n - b.size() ? SymInt(1) : b[i - (n - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1 || da == db) {
      out[i] = da;
    } else {
      KILN_FAIL(
          "{}: the size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
          "dimension {}",
          op, da.str(), db.str(), i);
    }
  }
  return out;
}

namespace {

// Whether sizes and strides are dense without overlap and not row-major (TensorImpl's rule on
// plain integers).
bool dense_but_not_contiguous(IntList sizes, IntList strides) {
  if (strides == IntList(contiguous_strides(sizes))) return false;
  std::vector<size_t> perm(sizes.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (size_t d : perm) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

SymDimVector layout_following_strides(SymIntList sizes, std::span<const Tensor> like) {
  const size_t ndim = sizes.size();
  // Default: row-major. A dense non-contiguous input of the same rank imposes its dim order.
  // A symbolic input is judged by its sizes and strides at the trace's hints, as the eager
  // kernels judge the real tensors: symbols are at least 2 (0 and 1 are specialized), and dense
  // strides of such sizes keep one order for every size the guards allow, so the layout traced
  // is the one eager gives at every call (a traced row-major layout where eager follows a
  // permuted input made the traced graph's later views invalid at run time).
  for (const Tensor& t : like) {
    if (!t.defined() || t.dim() != static_cast<int64_t>(ndim)) continue;
    DimVector hint_sizes, hint_strides;
    if (t.impl()->has_symbolic_sizes_strides()) {
      bool hinted = true;
      for (size_t d = 0; d < ndim && hinted; ++d) {
        const auto size = t.sym_sizes()[d].maybe_int(), stride = t.sym_strides()[d].maybe_int();
        hinted = size && stride;
        if (hinted) {
          hint_sizes.push_back(*size);
          hint_strides.push_back(*stride);
        }
      }
      if (!hinted || !dense_but_not_contiguous(hint_sizes, hint_strides)) continue;
    } else {
      if (t.is_contiguous() || !t.impl()->is_non_overlapping_and_dense()) continue;
      hint_strides = DimVector(t.strides().begin(), t.strides().end());
    }
    bool same_sizes = true;
    for (size_t d = 0; d < ndim; ++d) same_sizes &= (t.sym_sizes()[d] == sizes[d]);
    if (!same_sizes) continue;
    std::vector<size_t> perm(ndim);
    std::iota(perm.begin(), perm.end(), 0);
    const IntList st = hint_strides;
    // Fastest dim last; stable so that ties keep row-major order.
    std::stable_sort(perm.begin(), perm.end(), [&](size_t x, size_t y) { return st[x] > st[y]; });
    SymDimVector strides(ndim);
    SymInt s = 1;
    for (size_t k = ndim; k-- > 0;) {
      strides[perm[k]] = s;
      auto v = sizes[perm[k]].maybe_int();
      s = (v && *v < 1) ? s : s * sizes[perm[k]];
    }
    return strides;
  }
  return contiguous_strides(sizes);
}

// ---------------------------------------------------------------- config

TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& t) {
  outputs_.push_back(t);
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& t) {
  inputs_.push_back(t);
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::compute_dtype(DType d) {
  compute_dtype_ = d;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::output_dtype(DType d) {
  output_dtype_ = d;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::is_reduction(bool r) {
  is_reduction_ = r;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::op_name(const char* name) {
  op_name_ = name;
  return *this;
}

TensorIterator TensorIteratorConfig::build() {
  // The CPU kernels read operands' memory directly: a CUDA tensor here means the op mixed devices
  // (its meta placed it on the CPU), which must raise, not read device memory.
  for (const std::vector<Tensor>* list : {&outputs_, &inputs_}) {
    for (const Tensor& t : *list) {
      KILN_CHECK(!t.device().is_cuda(),
                 "{}: expected all tensors to be on the same device, but found at least two "
                 "devices, cpu and {}",
                 op_name_, t.device().str());
    }
  }
  TensorIterator it;
  it.op_name_ = op_name_;
  it.is_reduction_ = is_reduction_;
  it.noutputs_ = static_cast<int>(outputs_.size());
  std::optional<DType> out_dtype = output_dtype_ ? output_dtype_ : compute_dtype_;
  for (const Tensor& o : outputs_) {
    if (out_dtype && o.dtype() != *out_dtype) {
      // Compute into a temporary of the kernel's dtype; finish() copies it back.
      TensorMeta m;
      m.sizes = o.sym_sizes().vec();
      m.strides = layout_following_strides(o.sym_sizes(), std::span<const Tensor>(&o, 1));
      m.dtype = *out_dtype;
      m.device = o.device();
      it.operands_.push_back(empty_from_meta(m));
      it.original_outputs_.push_back(o);
    } else {
      it.operands_.push_back(o);
      it.original_outputs_.emplace_back();
    }
  }
  for (const Tensor& in : inputs_) {
    if (compute_dtype_ && in.dtype() != *compute_dtype_) {
      it.operands_.push_back(in.to(*compute_dtype_));
    } else {
      it.operands_.push_back(in);
    }
  }
  if (!compute_dtype_ && !inputs_.empty()) {
    for (const Tensor& in : inputs_) {
      KILN_CHECK_T(TypeError, in.dtype() == inputs_[0].dtype(),
                   "{}: expected all inputs to have dtype {}, got {}", op_name_,
                   dtype_name(inputs_[0].dtype()), dtype_name(in.dtype()));
    }
  }
  it.compute_shape(*this);
  it.compute_strides_and_reorder();
  it.coalesce();
  it.data_.resize(it.operands_.size());
  for (size_t i = 0; i < it.operands_.size(); ++i) {
    it.data_[i] = static_cast<char*>(it.operands_[i].data_ptr());
  }
  return it;
}

// ---------------------------------------------------------------- iterator

void TensorIterator::compute_shape(const TensorIteratorConfig& config) {
  if (is_reduction_) {
    // Inputs share the reduction's full shape; outputs have the same rank with 1 on reduced dims.
    const Tensor& in = operands_[static_cast<size_t>(noutputs_)];
    shape_ = DimVector(in.sizes());
    for (int i = 0; i < noutputs_; ++i) {
      const Tensor& o = operands_[static_cast<size_t>(i)];
      KILN_CHECK(o.dim() == in.dim(), "{}: reduction output rank {} differs from input rank {}",
                 op_name_, o.dim(), in.dim());
      for (int64_t d = 0; d < in.dim(); ++d) {
        KILN_CHECK(o.size(d) == in.size(d) || o.size(d) == 1,
                   "{}: reduction output size {} at dim {} must be 1 or {}", op_name_, o.size(d), d,
                   in.size(d));
      }
    }
    return;
  }
  shape_.clear();
  for (size_t i = static_cast<size_t>(noutputs_); i < operands_.size(); ++i) {
    shape_ = broadcast_shapes(shape_, operands_[i].sizes(), op_name_);
  }
  // Outputs are allocated by the caller: inputs broadcast to the output's shape, never the
  // other way round.
  for (int i = 0; i < noutputs_; ++i) {
    const Tensor& o = operands_[static_cast<size_t>(i)];
    if (config.inputs_.empty()) {
      shape_ = DimVector(o.sizes());
      continue;
    }
    bool fits = o.dim() >= static_cast<int64_t>(shape_.size());
    for (size_t k = 0; fits && k < shape_.size(); ++k) {
      int64_t out_size = o.sizes()[o.sizes().size() - shape_.size() + k];
      fits = shape_[k] == out_size || shape_[k] == 1;
    }
    KILN_CHECK(fits, "{}: output with shape [{}] doesn't match the broadcast shape [{}]", op_name_,
               fmt::join(o.sizes(), ", "), fmt::join(shape_, ", "));
    shape_ = DimVector(o.sizes());
  }
}

void TensorIterator::compute_strides_and_reorder() {
  const size_t nd = shape_.size();
  const size_t nt = operands_.size();
  std::vector<DimVector> strides(nt, DimVector(nd, 0));
  for (size_t i = 0; i < nt; ++i) {
    const Tensor& t = operands_[i];
    IntList sz = t.sizes();
    IntList st = t.strides();
    size_t offset = nd - sz.size();
    auto elem = static_cast<int64_t>(t.itemsize());
    for (size_t d = 0; d < sz.size(); ++d) {
      // Size-1 dims (broadcast or not) never advance, so their stride is 0.
      strides[i][offset + d] = sz[d] == 1 ? 0 : st[d] * elem;
    }
  }
  // perm[k] = original dim placed at position k, fastest first. Start from reversed (row-major)
  // order, then move a dim earlier when the operands' strides say it is faster.
  std::vector<size_t> perm(nd);
  for (size_t k = 0; k < nd; ++k) perm[k] = nd - 1 - k;
  auto should_swap = [&](size_t d0, size_t d1) {  // true if d1 is faster than d0
    for (size_t i = 0; i < nt; ++i) {
      if (is_reduction_ && i < static_cast<size_t>(noutputs_)) continue;
      int64_t s0 = strides[i][d0], s1 = strides[i][d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s1 < s0;
      if (shape_[d0] != shape_[d1]) return false;
    }
    return false;
  };
  for (size_t k = 1; k < nd; ++k) {
    for (size_t j = k; j > 0 && should_swap(perm[j - 1], perm[j]); --j) {
      std::swap(perm[j - 1], perm[j]);
    }
  }
  DimVector shape(nd);
  for (size_t k = 0; k < nd; ++k) shape[k] = shape_[perm[k]];
  shape_ = shape;
  strides_.assign(nt, DimVector(nd));
  for (size_t i = 0; i < nt; ++i) {
    for (size_t k = 0; k < nd; ++k) strides_[i][k] = strides[i][perm[k]];
  }
}

void TensorIterator::coalesce() {
  if (shape_.size() <= 1) return;
  const size_t nt = operands_.size();
  auto can_merge = [&](size_t d0, size_t d1) {
    if (shape_[d0] == 1 || shape_[d1] == 1) return true;
    for (size_t i = 0; i < nt; ++i) {
      if (strides_[i][d0] * shape_[d0] != strides_[i][d1]) return false;
    }
    return true;
  };
  size_t prev = 0;
  for (size_t d = 1; d < shape_.size(); ++d) {
    if (can_merge(prev, d)) {
      if (shape_[prev] == 1) {
        for (size_t i = 0; i < nt; ++i) strides_[i][prev] = strides_[i][d];
      }
      shape_[prev] *= shape_[d];
    } else {
      ++prev;
      if (prev != d) {
        shape_[prev] = shape_[d];
        for (size_t i = 0; i < nt; ++i) strides_[i][prev] = strides_[i][d];
      }
    }
  }
  shape_.resize(prev + 1);
  for (auto& s : strides_) s.resize(prev + 1);
}

int64_t TensorIterator::numel() const {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

bool TensorIterator::is_contiguous() const {
  if (shape_.size() > 1) return false;
  if (shape_.empty()) return true;
  for (int i = 0; i < ntensors(); ++i) {
    if (strides_[static_cast<size_t>(i)][0] !=
        static_cast<int64_t>(operands_[static_cast<size_t>(i)].itemsize())) {
      return false;
    }
  }
  return true;
}

bool TensorIterator::is_reduced_dim(int d) const {
  for (int i = 0; i < noutputs_; ++i) {
    if (strides_[static_cast<size_t>(i)][static_cast<size_t>(d)] != 0) return false;
  }
  return shape_[static_cast<size_t>(d)] > 1;
}

void TensorIterator::serial_for_each(const Loop2d& loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const size_t nt = operands_.size();
  const size_t nd = shape_.size();
  std::vector<char*> ptrs(nt);
  std::vector<int64_t> loop_strides(2 * nt, 0);
  for (size_t i = 0; i < nt; ++i) {
    loop_strides[i] = nd > 0 ? strides_[i][0] : 0;
    loop_strides[nt + i] = nd > 1 ? strides_[i][1] : 0;
  }
  if (nd <= 1) {
    for (size_t i = 0; i < nt; ++i) ptrs[i] = data_[i] + begin * loop_strides[i];
    loop(ptrs.data(), loop_strides.data(), end - begin, 1);
    return;
  }
  // Multi-dim counter for `begin`.
  DimVector counter(nd, 0);
  int64_t rem = begin;
  for (size_t d = 0; d < nd; ++d) {
    counter[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    for (size_t i = 0; i < nt; ++i) {
      char* p = data_[i];
      for (size_t d = 0; d < nd; ++d) p += counter[d] * strides_[i][d];
      ptrs[i] = p;
    }
    int64_t size0 = shape_[0];
    int64_t step;
    if (counter[0] == 0) {
      int64_t rows = std::min((end - pos) / size0, shape_[1] - counter[1]);
      if (rows >= 1) {
        loop(ptrs.data(), loop_strides.data(), size0, rows);
        step = rows * size0;
        counter[1] += rows;
      } else {
        step = end - pos;
        loop(ptrs.data(), loop_strides.data(), step, 1);
        counter[0] += step;
      }
    } else {
      step = std::min(size0 - counter[0], end - pos);
      loop(ptrs.data(), loop_strides.data(), step, 1);
      counter[0] += step;
    }
    pos += step;
    // Carry.
    for (size_t d = 0; d + 1 < nd; ++d) {
      if (counter[d] >= shape_[d]) {
        counter[d + 1] += counter[d] / shape_[d];
        counter[d] %= shape_[d];
      }
    }
  }
}

void TensorIterator::for_each(const Loop2d& loop, int64_t grain_size) {
  int64_t n = numel();
  if (n == 0) return;
  parallel_for(0, n, grain_size, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
}

void TensorIterator::finish() {
  for (size_t i = 0; i < original_outputs_.size(); ++i) {
    if (original_outputs_[i].defined()) {
      Tensor dst = original_outputs_[i];
      dst.copy_(operands_[i]);
    }
  }
}

}  // namespace kiln::ops
