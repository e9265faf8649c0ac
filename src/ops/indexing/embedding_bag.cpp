// _embedding_bag: sums, means or maxima of bags of embedding rows. A bag is the run of `indices`
// from one offset to the next; empty bags give zero rows. Besides the result, aten returns three
// bookkeeping tensors for the backward pass (offset2bag, bag_size, max_indices), reproduced here
// with PyTorch's CPU conventions so that the outputs match it exactly.
#include "ops/indexing/index_common.h"
#include "ops/indexing/strided_loop.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace indexing;

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

const char* mode_name(int64_t mode) {
  return mode == kSum ? "sum" : mode == kMean ? "mean" : "max";
}

struct BagArgs {
  const Tensor& weight;
  const Tensor& indices;
  const Tensor& offsets;
  int64_t mode;
  Tensor per_sample_weights;
  bool include_last_offset;
  int64_t padding_idx;  // < 0: none

  explicit BagArgs(const Stack& a)
      : weight(a[0].to_tensor()),
        indices(a[1].to_tensor()),
        offsets(a[2].to_tensor()),
        mode(a[4].to_int()),
        per_sample_weights(a[6].to_optional_tensor()),
        include_last_offset(a[7].to_bool()),
        padding_idx(a[8].to_int()) {}

  int64_t num_bags() const { return offsets.size(0) - (include_last_offset ? 1 : 0); }
  // PyTorch's CPU sum kernel for float/half weights with unit row stride keeps no offset2bag.
  bool sum_fast_path() const {
    const DType d = weight.dtype();
    return mode == kSum && padding_idx < 0 && weight.stride(1) == 1 &&
           (d == DType::Float32 || d == DType::Float16 || d == DType::BFloat16);
  }
};

void check_bag_args(const BagArgs& b) {
  const char* op = "embedding_bag";
  KILN_CHECK(b.weight.dim() == 2, "{}(): weight has to be a 2D Tensor, got {} dims", op,
             b.weight.dim());
  KILN_CHECK_T(TypeError, is_floating_point(b.weight.dtype()),
               "{}(): expected weight to have a floating point dtype, got {}", op,
               torch_type_name(b.weight.dtype()));
  check_index_dtype(b.indices, /*allow_int32=*/true, op);
  check_index_dtype(b.offsets, /*allow_int32=*/true, op);
  KILN_CHECK(b.indices.dim() == 1,
             "{}(): indices has to be a 1D Tensor (got {} dims); for fixed-size bags pass 2-D "
             "indices to kiln::embedding_bag",
             op, b.indices.dim());
  KILN_CHECK(b.offsets.dim() == 1, "{}(): offsets has to be a 1D Tensor, got {} dims", op,
             b.offsets.dim());
  KILN_CHECK(b.mode >= kSum && b.mode <= kMax,
             "{}(): mode has to be 0 (sum), 1 (mean) or 2 (max), got {}", op, b.mode);
  KILN_CHECK(!b.include_last_offset || b.offsets.size(0) >= 1,
             "{}(): include_last_offset requires at least one offset", op);
  KILN_CHECK(b.padding_idx < b.weight.size(0),
             "{}(): padding_idx must be within the number of embeddings ({}), got {}", op,
             b.weight.size(0), b.padding_idx);
  if (b.per_sample_weights.defined()) {
    KILN_CHECK(b.mode == kSum,
               "{}(): per_sample_weights is only supported for mode='sum' (got mode='{}')", op,
               mode_name(b.mode));
    KILN_CHECK_T(TypeError, b.per_sample_weights.dtype() == b.weight.dtype(),
                 "{}(): expected per_sample_weights to have dtype {} as weight, got {}", op,
                 torch_type_name(b.weight.dtype()), torch_type_name(b.per_sample_weights.dtype()));
    KILN_CHECK(IntList(b.per_sample_weights.sizes()) == IntList(b.indices.sizes()),
               "{}(): per_sample_weights {} must have the shape of indices {}", op,
               sizes_of(b.per_sample_weights), sizes_of(b.indices));
  }
}

std::vector<TensorMeta> embedding_bag_meta(const Stack& args) {
  const BagArgs b(args);
  check_bag_args(b);
  const SymInt bags = b.num_bags();
  const SymInt dim = b.weight.sym_sizes()[1];
  const DType idx = b.indices.dtype();
  const Device dev = b.weight.device();
  const SymInt o2b = b.sum_fast_path() ? SymInt(0) : b.indices.sym_sizes()[0];
  return {
      TensorMeta::contiguous({bags, dim}, b.weight.dtype(), dev),
      TensorMeta::contiguous({o2b}, idx, dev),
      TensorMeta::contiguous({bags}, idx, dev),
      TensorMeta::contiguous(b.mode == kMax ? SymDimVector{bags, dim} : SymDimVector{bags}, idx,
                             dev),
  };
}

// Reads offsets (any int dtype and layout), checking they start at 0, never decrease and stay
// within the indices.
std::vector<int64_t> read_offsets(const Tensor& offsets, int64_t n) {
  const std::vector<int64_t> off = read_indices(offsets, 0, INT64_MAX, "embedding_bag");
  for (size_t i = 0; i < off.size(); ++i) {
    KILN_CHECK(i > 0 || off[0] == 0,
               "embedding_bag(): offsets[0] has to be 0, i.e., the first sequence in the "
               "mini-batch has to start from position 0. However, got {}",
               off[0]);
    KILN_CHECK(i == 0 || off[i] >= off[i - 1],
               "embedding_bag(): offsets must be non-decreasing, got offsets[{}] = {} after {}", i,
               off[i], off[i - 1]);
  }
  KILN_CHECK(off.empty() || off.back() <= n,
             "embedding_bag(): offsets[-1] can not be greater than input's length {} but got "
             "offsets[-1] of {}",
             n, off.empty() ? 0 : off.back());
  return off;
}

// Writes an int64 vector into an int32 or int64 output.
void store(const Tensor& out, const std::vector<int64_t>& values) {
  if (out.dtype() == DType::Int64) {
    std::copy(values.begin(), values.end(), out.data_ptr<int64_t>());
  } else {
    int32_t* p = out.data_ptr<int32_t>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<int32_t>(values[i]);
  }
}

void embedding_bag_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const BagArgs b(args);
  const Tensor& weight = b.weight;
  const int64_t n = b.indices.size(0), bags = b.num_bags(), dim = weight.size(1);
  const std::vector<int64_t> idx = read_indices(b.indices, 0, weight.size(0), "embedding_bag");
  const std::vector<int64_t> off = read_offsets(b.offsets, n);
  // Bag k covers [off[k], off[k+1]); the last bag runs to the end of indices (as PyTorch's
  // kernel does, include_last_offset or not).
  auto bag_begin = [&](int64_t k) { return off[static_cast<size_t>(k)]; };
  auto bag_end = [&](int64_t k) { return k + 1 < bags ? off[static_cast<size_t>(k + 1)] : n; };
  const bool padded = b.padding_idx >= 0;
  auto counts = [&](int64_t i) { return !padded || idx[static_cast<size_t>(i)] != b.padding_idx; };

  Tensor target = strided::dense_target(outs[0], weight.dtype());
  std::vector<int64_t> bag_size(static_cast<size_t>(bags), 0);
  std::vector<int64_t> max_idx(static_cast<size_t>(b.mode == kMax ? bags * dim : bags), 0);
  const Tensor psw = b.per_sample_weights.defined() ? b.per_sample_weights.contiguous() : Tensor();
  KILN_DISPATCH_FLOATING(weight.dtype(), "embedding_bag", [&]<typename T>() {
    using acc_t = opmath_t<T>;
    const T* w = weight.data_ptr<T>();
    const int64_t ws0 = weight.stride(0);
    const int64_t ws1 = weight.stride(1);
    const T* sw = psw.defined() ? psw.data_ptr<T>() : nullptr;
    T* out = target.data_ptr<T>();
    // Bags write disjoint rows: parallel over bags.
    parallel_for(0, bags, std::max<int64_t>(1, 4096 / std::max<int64_t>(dim, 1)),
                 [&](int64_t first, int64_t last) {
                   std::vector<acc_t> acc(static_cast<size_t>(dim));
                   for (int64_t k = first; k < last; ++k) {
                     std::fill(acc.begin(), acc.end(), acc_t(0));
                     int64_t count = 0;
                     int64_t* argmax =
                         b.mode == kMax ? &max_idx[static_cast<size_t>(k * dim)] : nullptr;
                     for (int64_t i = bag_begin(k); i < bag_end(k); ++i) {
                       if (!counts(i)) continue;
                       const int64_t row = idx[static_cast<size_t>(i)];
                       const T* wr = w + row * ws0;
                       if (b.mode == kMax) {
                         for (int64_t j = 0; j < dim; ++j) {
                           const auto v = static_cast<acc_t>(wr[j * ws1]);
                           if (count == 0 || v > acc[static_cast<size_t>(j)]) {
                             acc[static_cast<size_t>(j)] = v;
                             argmax[j] = row;
                           }
                         }
                       } else {
                         const acc_t s = sw ? static_cast<acc_t>(sw[i]) : acc_t(1);
                         for (int64_t j = 0; j < dim; ++j) {
                           acc[static_cast<size_t>(j)] += sw ? static_cast<acc_t>(wr[j * ws1]) * s
                                                             : static_cast<acc_t>(wr[j * ws1]);
                         }
                       }
                       ++count;
                     }
                     // Mean divides by the bag's length (empty bags stay zero).
                     const auto len = static_cast<acc_t>(std::max<int64_t>(count, 1));
                     for (int64_t j = 0; j < dim; ++j) {
                       const acc_t v = acc[static_cast<size_t>(j)];
                       out[k * dim + j] = static_cast<T>(b.mode == kMean ? v / len : v);
                     }
                     if (b.mode != kSum) bag_size[static_cast<size_t>(k)] = count;
                   }
                 });
  });
  strided::commit(outs[0], target);

  if (outs[1].numel() > 0) {
    std::vector<int64_t> offset2bag(static_cast<size_t>(n), 0);
    for (int64_t k = 0; k < bags; ++k) {
      for (int64_t i = bag_begin(k); i < bag_end(k); ++i) offset2bag[static_cast<size_t>(i)] = k;
    }
    store(outs[1], offset2bag);
  }
  store(outs[2], bag_size);
  store(outs[3], b.mode == kMean ? bag_size : max_idx);
}

// aten's _embedding_bag_backward in kiln ops. Sum/mean: every index's row receives its bag's
// gradient, scaled by its per-sample weight (sum) or 1/bag length (mean); max: each bag's
// gradient goes to the rows its maxima came from. Rows equal to padding_idx get nothing.
std::vector<Tensor> embedding_bag_derivative(const BackwardArgs& a) {
  const BagArgs b(a.inputs);
  const Tensor& g = a.grad_outputs[0];  // [bags, dim]
  const int64_t n = b.indices.size(0), bags = b.num_bags(), dim = b.weight.size(1);
  const TensorOptions opts = g.options();
  const bool weighted = b.per_sample_weights.defined();
  if (n == 0 || bags == 0) {
    return {zeros(b.weight.sizes(), opts), Tensor(), Tensor(),
            weighted ? zeros({n}, opts) : Tensor()};
  }
  const Tensor idx = b.indices.to(kInt64);
  if (b.mode == kMax) {
    // Empty bags report row 0 as their argmax: their gradient is masked out.
    const Tensor nonempty = (a.outputs[2] > 0).unsqueeze(1).to(g.dtype());
    const Tensor cols = arange(dim, TensorOptions(kInt64)).unsqueeze(0).expand({bags, dim});
    return {zeros(b.weight.sizes(), opts)
                .index_put({a.outputs[3].to(kInt64), cols}, g * nonempty, /*accumulate=*/true),
            Tensor(), Tensor(), Tensor()};
  }
  // The bag of each index: how many bag starts lie at or before it, less one.
  const Tensor starts = b.offsets.narrow(0, 0, bags).to(kInt64);
  const Tensor bag =
      (arange(n, TensorOptions(kInt64)).unsqueeze(1) >= starts.unsqueeze(0)).to(kInt64).sum({1}) -
      1;
  const Tensor rows = g.index_select(0, bag);  // [n, dim]
  Tensor scale = b.padding_idx >= 0 ? (idx != b.padding_idx).to(g.dtype()) : ones({n}, opts);
  if (b.mode == kMean) {
    scale = scale / a.outputs[2].to(g.dtype()).clamp_min(1).index_select(0, bag);
  }
  Tensor grad_psw;
  if (weighted) {
    grad_psw = (rows * b.weight.index_select(0, idx)).sum({1}) * scale;
    scale = scale * b.per_sample_weights;
  }
  if (a.inputs[3].to_bool()) {  // scale_grad_by_freq: divide by how often each row is used
    const Tensor counts = zeros({b.weight.size(0)}, opts).index_put({idx}, ones({n}, opts), true);
    scale = scale / counts.index_select(0, idx);
  }
  return {zeros(b.weight.sizes(), opts).index_put({idx}, rows * scale.unsqueeze(1), true), Tensor(),
          Tensor(), grad_psw};
}

Tensor ints(std::vector<int64_t> values, DType dtype = kInt64) {
  const auto n = static_cast<int64_t>(values.size());
  return from_vector(values, {n}).to(dtype);
}

std::vector<Sample> embedding_bag_samples() {
  const Tensor none;
  const Tensor idx = ints({1, 2, 4, 5, 4, 3});
  const Tensor off = ints({0, 2, 2, 5});
  // Arguments after offsets: scale_grad_by_freq, mode, sparse, per_sample_weights,
  // include_last_offset, padding_idx.
  auto args = [&](Tensor w, Tensor i, Tensor o, int64_t mode, Tensor psw = Tensor(),
                  bool last = false, int64_t pad = -1) {
    return Stack{w, i, o, false, mode, false, psw.defined() ? IValue(psw) : IValue(), last, pad};
  };
  std::vector<Sample> s;
  for (int64_t mode : {0, 1, 2}) {
    s.push_back({args(make_sample({6, 3}, kFloat32), idx, off, mode),
                 fmt::format("mode {}, an empty bag", mode)});
    s.push_back({args(make_sample({6, 3}, kFloat64), idx, off, mode, Tensor(), false, 4),
                 fmt::format("mode {}, padding_idx", mode)});
  }
  s.push_back({args(make_sample({6, 3}, kFloat32), idx, off, 0, make_sample({6}, kFloat32, 0, 1)),
               "per_sample_weights"});
  s.push_back({args(make_noncontiguous_sample({6, 4}, kFloat64), idx.to(kInt32),
                    ints({0, 3, 6}, kInt32), 1, Tensor(), true),
               "int32, include_last_offset, non-contiguous weight"});
  // (float64: for float32, PyTorch's offset2bag output depends on weight's layout.)
  s.push_back({args(make_noncontiguous_sample({6, 4}, kFloat64), idx, ints({0, 1}), 0),
               "sum, non-contiguous weight"});
  s.push_back({args(make_sample({6, 2}, kFloat32), ints({}), ints({0, 0}), 1), "empty indices"});
  s.push_back({args(make_sample({6, 2}, kFloat32), idx, ints({0, 7}), 0), "offset past the end"});
  s.push_back(
      {args(make_sample({6, 2}, kFloat32), ints({1, 6}), ints({0}), 0), "index out of range"});
  s.push_back({args(make_sample({6, 2}, kFloat32), idx, off, 1, make_sample({6}, kFloat32)),
               "per_sample_weights with mean"});
  return s;
}

}  // namespace

KILN_OP(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
    "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool "
    "include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)")
    .meta(embedding_bag_meta)
    .cpu(embedding_bag_impl)
    .derivative(embedding_bag_derivative, DerivativeReads::InputsAndOutputs)
    .samples(embedding_bag_samples)
    .tolerance(1e-5, 1e-5);

}  // namespace kiln::ops

namespace kiln {

Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     int64_t mode, const Tensor& per_sample_weights, bool include_last_offset,
                     std::optional<int64_t> padding_idx, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("_embedding_bag");
  Tensor flat = indices, off = offsets, psw = per_sample_weights;
  if (indices.dim() == 2) {
    // Fixed-size bags: one bag per row.
    KILN_CHECK(!offsets.defined(),
               "embedding_bag(): if indices is 2D, then offsets has to be None");
    const int64_t bags = indices.size(0), len = indices.size(1);
    flat = indices.reshape({-1});
    off = len == 0 ? zeros({bags}, indices.dtype())
                   : arange(0, bags * len, len, TensorOptions(indices.dtype()));
    if (psw.defined()) psw = psw.reshape({-1});
    include_last_offset = false;
  } else {
    KILN_CHECK(indices.dim() == 1, "embedding_bag(): indices has to be 1D or 2D, got {} dims",
               indices.dim());
    KILN_CHECK(offsets.defined(), "embedding_bag(): offsets has to be given for 1D indices");
  }
  int64_t pad = -1;
  if (padding_idx) {
    pad = *padding_idx < 0 ? *padding_idx + weight.size(0) : *padding_idx;
    KILN_CHECK(pad >= 0 && pad < weight.size(0),
               "embedding_bag(): padding_idx {} out of range for {} embeddings", *padding_idx,
               weight.size(0));
  }
  ops::IValue w = psw.defined() ? ops::IValue(psw) : ops::IValue();
  return ops::call(op, {weight, flat, off, false, mode, false, w, include_last_offset, pad},
                   &loc)[0];
}

}  // namespace kiln
