// searchsorted: for each value, a binary search in the innermost dim of sorted_sequence (one
// shared 1-D sequence, or one row per leading index of the values), optionally through a sorter
// permutation. Both operands are compared in their promoted dtype; the bounds use aten's
// comparisons (!(x >= v) / !(x > v)) so NaNs land where PyTorch puts them.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"
#include "ops/sort/sort_common.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sorting.h>

namespace kiln::ops {
namespace {

using namespace sorting;

// The dtype a Scalar value takes as a tensor (aten's scalar_to_tensor).
DType scalar_dtype(const Scalar& s) {
  if (s.is_bool()) return kBool;
  return s.is_floating_point() ? kFloat64 : kInt64;
}

// Whether `right` (upper bound) applies, after checking side against right.
bool use_right(bool right, const std::optional<std::string>& side) {
  if (!side) return right;
  KILN_CHECK(*side == "left" || *side == "right",
             "torch.searchsorted(): side can only be 'left' or 'right' but got {}", *side);
  KILN_CHECK(!(right && *side == "left"),
             "torch.searchsorted(): side and right can't be set to opposites, got side of left "
             "while right was True");
  return *side == "right";
}

// aten's searchsorted_pre_check. values_sizes/values_dim describe the values (a Scalar is
// 0-dim with one element).
void check_searchsorted(const Tensor& boundaries, IntList values_sizes, bool scalar_value,
                        bool right, const std::optional<std::string>& side, const Tensor& sorter) {
  use_right(right, side);
  if (sorter.defined()) {
    KILN_CHECK_T(TypeError, sorter.dtype() == kInt64,
                 "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {}",
                 dtype_name(sorter.dtype()));
    KILN_CHECK(IntList(sorter.sizes()) == IntList(boundaries.sizes()),
               "torch.searchsorted(): boundary and sorter must have the same size, but got "
               "boundary tensor {} and got sorter tensor {}",
               sizes_str(boundaries.sizes()), sizes_str(sorter.sizes()));
  }
  KILN_CHECK(boundaries.dim() != 0,
             "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
             "dimension");
  const auto vdim = static_cast<int64_t>(values_sizes.size());
  if (scalar_value || vdim == 0) {
    KILN_CHECK(boundaries.dim() == 1,
               "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
               "dimension is 1, but we got boundaries tensor dim({}) and input value's dim({}) "
               "numel(1)",
               boundaries.dim(), vdim);
    return;
  }
  if (boundaries.dim() == 1) return;
  bool leading_match = boundaries.dim() == vdim;
  for (int64_t d = 0; leading_match && d + 1 < vdim; ++d) {
    leading_match = boundaries.size(d) == values_sizes[static_cast<size_t>(d)];
  }
  KILN_CHECK(leading_match,
             "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
             "dimensions of boundaries tensor and input value tensor must match, but we got "
             "boundaries tensor {} and input value tensor {}",
             sizes_str(boundaries.sizes()), sizes_str(values_sizes));
}

template <typename T>
void search(const Tensor& boundaries, const Tensor& values, const Tensor& sorter, bool right,
            const Tensor& out) {
  using K = key_t<T>;
  const T* bd = boundaries.data_ptr<T>();
  const T* val = values.data_ptr<T>();
  const int64_t* sort = sorter.defined() ? sorter.data_ptr<int64_t>() : nullptr;
  const int64_t n = boundaries.size(-1);
  const bool shared = boundaries.dim() == 1;
  const int64_t inner = values.dim() == 0 ? 1 : values.size(-1);
  if (sort != nullptr) {
    for (int64_t i = 0; i < sorter.numel(); ++i) {
      KILN_CHECK_T(IndexError, sort[i] >= 0 && sort[i] < n,
                   "torch.searchsorted(): sorter index {} is out of bounds for a sequence of "
                   "size {}",
                   sort[i], n);
    }
  }
  auto run = [&]<typename I>() {
    I* o = out.data_ptr<I>();
    parallel_for(0, values.numel(), kGrainSize / 16, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const int64_t base = shared ? 0 : (i / inner) * n;
        const K v = static_cast<K>(val[i]);
        int64_t lo = 0, hi = n;
        while (lo < hi) {
          const int64_t mid = lo + ((hi - lo) >> 1);
          const K x = static_cast<K>(bd[base + (sort != nullptr ? sort[base + mid] : mid)]);
          if (right ? !(x > v) : !(x >= v)) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        o[i] = static_cast<I>(lo);
      }
    });
  };
  if (out.dtype() == kInt32) {
    run.template operator()<int32_t>();
  } else {
    run.template operator()<int64_t>();
  }
}

std::vector<TensorMeta> searchsorted_meta(const Stack& args) {
  const Tensor& boundaries = args[0].to_tensor();
  const bool scalar_value = !args[1].is_tensor();
  const Tensor values = scalar_value ? Tensor() : args[1].to_tensor();
  const Tensor sorter = args[5].to_optional_tensor();
  check_searchsorted(boundaries, scalar_value ? IntList() : values.sizes(), scalar_value,
                     args[3].to_bool(), args[4].to_optional_string(), sorter);
  const DType out = args[2].to_bool() ? kInt32 : kInt64;
  return {TensorMeta::contiguous(scalar_value ? SymDimVector{} : values.sym_sizes().vec(), out,
                                 boundaries.device())};
}

void searchsorted_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& boundaries = args[0].to_tensor();
  Tensor values;
  DType common;
  if (args[1].is_tensor()) {
    values = args[1].to_tensor();
    common = promote_types(boundaries.dtype(), values.dtype());
  } else {
    const Scalar s = args[1].to_scalar();
    common = promote_types(boundaries.dtype(), scalar_dtype(s));
    values = scalar_tensor(s, TensorOptions(common));
  }
  if (values.numel() == 0) return;
  const bool right = use_right(args[3].to_bool(), args[4].to_optional_string());
  const Tensor bd = boundaries.to(common).contiguous();
  const Tensor vals = values.to(common).contiguous();
  const Tensor sorter = args[5].to_optional_tensor();
  const Tensor sort = sorter.defined() ? sorter.contiguous() : sorter;
  Tensor target = strided::dense_target(outs[0], outs[0].dtype());
  KILN_DISPATCH_ALL(common, "searchsorted",
                    [&]<typename T>() { search<T>(bd, vals, sort, right, target); });
  strided::commit(outs[0], target);
}

// The Scalar overload as the Tensor one, the value a 0-dim tensor of the common dtype.
std::vector<Tensor> searchsorted_scalar_decomposition(const Stack& args) {
  static const OpDef& tensor_overload = OpRegistry::instance().get("searchsorted.Tensor");
  searchsorted_meta(args);
  const Tensor& boundaries = args[0].to_tensor();
  const Scalar s = args[1].to_scalar();
  const Tensor value = full({}, s,
                            TensorOptions(promote_types(boundaries.dtype(), scalar_dtype(s)))
                                .device(boundaries.device()));
  return call(tensor_overload, {args[0], value, args[2], args[3], args[4], args[5]});
}

std::vector<Sample> searchsorted_samples(bool scalar) {
  Tensor seq = from_vector<float>({-2.0f, -1.0f, 0.0f, 0.5f, 1.0f, 1.0f, 2.0f, 3.0f}, {8});
  Tensor rows = from_vector<int64_t>({0, 2, 4, 6, 1, 1, 3, 9, -5, 0, 0, 5}, {3, 4});
  auto kw = [](Stack a, bool out_int32, bool right, std::optional<std::string> side,
               Tensor sorter) {
    a.emplace_back(out_int32);
    a.emplace_back(right);
    a.emplace_back(side);
    a.emplace_back(sorter.defined() ? IValue(sorter) : IValue());
    return a;
  };
  if (scalar) {
    return {
        {kw({seq, 1.0}, false, false, std::nullopt, {}), "float scalar, left"},
        {kw({seq, 1}, true, true, std::nullopt, {}), "int scalar, right, int32"},
        {kw({from_vector<int64_t>({1, 3, 5}, {3}), 2.5}, false, false, std::string("right"), {}),
         "int64 sequence, float scalar"},
        {kw({rows, 1}, false, false, std::nullopt, {}), "2-D sequence (raises)"},
    };
  }
  Tensor unsorted = from_vector<double>({3.0, -1.0, 2.0, 0.0, 5.0}, {5});
  Tensor sorter = from_vector<int64_t>({1, 3, 2, 0, 4}, {5});
  Tensor with_nan = from_vector<double>({1.0, 2.0, NAN}, {3});
  return {
      {kw({seq, make_sample({3, 4}, kFloat32)}, false, false, std::nullopt, {}), "1-D sequence"},
      {kw({seq, make_sample({3, 4}, kFloat32, -3, 3, 1)}, false, true, std::nullopt, {}), "right"},
      {kw({seq, from_vector<float>({1.0f, 0.5f, -3.0f, 9.0f}, {4})}, true, false,
          std::string("right"), {}),
       "side right, ties, int32 out"},
      {kw({rows, make_sample({3, 5}, kInt64, -6, 10, 2)}, false, false, std::nullopt, {}),
       "per-row sequences"},
      {kw({rows, make_noncontiguous_sample({3, 2}, kFloat32, -6, 10, 3)}, false, false,
          std::nullopt, {}),
       "non-contiguous values, promoted"},
      {kw({unsorted, from_vector<double>({-2.0, 0.5, 2.0, 7.0}, {4})}, false, false, std::nullopt,
          sorter),
       "sorter"},
      {kw({with_nan, from_vector<double>({2.0, NAN, 5.0}, {3})}, false, false, std::nullopt, {}),
       "NaN"},
      {kw({seq, make_sample({}, kFloat32)}, false, false, std::nullopt, {}), "0-dim values"},
      {kw({seq, make_sample({0, 2}, kFloat32)}, false, false, std::nullopt, {}), "empty values"},
      {kw({rows, from_vector<int64_t>({1, 2}, {2})}, false, false, std::nullopt, {}),
       "leading dims mismatch (raises)"},
      {kw({unsorted, from_vector<double>({1.0}, {1})}, false, false, std::nullopt,
          from_vector<int64_t>({0, 1}, {2})),
       "sorter of wrong shape (raises)"},
      {kw({seq, from_vector<float>({1.0f}, {1})}, false, true, std::string("left"), {}),
       "side contradicts right (raises)"},
  };
}

}  // namespace

KILN_OP(
    "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool "
    "right=False, str? side=None, Tensor? sorter=None) -> Tensor")
    .meta(searchsorted_meta)
    .cpu(searchsorted_impl)
    .out_variant()
    .not_differentiable()
    .samples([] { return searchsorted_samples(false); });

KILN_OP(
    "searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool "
    "right=False, str? side=None, Tensor? sorter=None) -> Tensor")
    .meta(searchsorted_meta)
    .cpu(searchsorted_impl)
    .decomposition(searchsorted_scalar_decomposition)
    .out_variant()
    .not_differentiable()
    .samples([] { return searchsorted_samples(true); });

}  // namespace kiln::ops

namespace kiln {

namespace {
ops::Stack searchsorted_args(const Tensor& seq, ops::IValue self, bool out_int32, bool right,
                             std::optional<std::string> side, const Tensor& sorter) {
  return {seq,   std::move(self), out_int32,
          right, std::move(side), sorter.defined() ? ops::IValue(sorter) : ops::IValue()};
}
}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string> side, const Tensor& sorter,
                    const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("searchsorted.Tensor");
  return ops::call1(
      op, searchsorted_args(sorted_sequence, self, out_int32, right, std::move(side), sorter),
      &loc);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string> side, const Tensor& sorter,
                    const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("searchsorted.Scalar");
  return ops::call1(
      op, searchsorted_args(sorted_sequence, self, out_int32, right, std::move(side), sorter),
      &loc);
}

}  // namespace kiln
