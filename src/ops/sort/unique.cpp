// unique: the distinct elements (_unique2) or distinct slices along a dim (unique_dim), sorted,
// with the inverse mapping and counts. How many there are depends on the data, so these are
// Custom ops that make their own outputs; on the meta device they refuse, as there is no data
// to count.
#include "ops/samples.h"
#include "ops/sizes_str.h"
#include "ops/sort/sort_common.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sorting.h>
#include <kiln/ops/view.h>

#include <algorithm>
#include <numeric>

namespace kiln::ops {
namespace {

using namespace sorting;

Tensor empty_int64(IntList sizes, Device device) {
  return empty(sizes, TensorOptions(kInt64).device(device));
}

// The flattened elements, sorted (NaN last, each NaN distinct as NaN != NaN), grouped.
template <typename T>
std::vector<Tensor> unique_flat(const Tensor& self, bool return_inverse, bool return_counts) {
  using K = key_t<T>;
  const Tensor flat = self.contiguous();
  const int64_t n = flat.numel();
  const T* p = flat.data_ptr<T>();
  std::vector<std::pair<K, int64_t>> buf(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = {static_cast<K>(p[i]), i};
  std::stable_sort(buf.begin(), buf.end(),
                   [](const auto& a, const auto& b) { return ascending(a.first, b.first); });
  std::vector<T> values;
  std::vector<int64_t> counts;
  Tensor inverse =
      return_inverse ? empty_int64(self.sizes(), self.device()) : empty_int64({0}, self.device());
  int64_t* inv = return_inverse ? inverse.data_ptr<int64_t>() : nullptr;
  for (size_t i = 0; i < buf.size(); ++i) {
    if (i == 0 || !(buf[i].first == buf[i - 1].first)) {
      values.push_back(static_cast<T>(buf[i].first));
      counts.push_back(0);
    }
    ++counts.back();
    if (inv != nullptr) inv[buf[i].second] = static_cast<int64_t>(values.size()) - 1;
  }
  const auto m = static_cast<int64_t>(values.size());
  Tensor out = empty({m}, self.options());
  std::copy(values.begin(), values.end(), out.data_ptr<T>());
  Tensor count_out = empty_int64({return_counts ? m : 0}, self.device());
  if (return_counts) std::copy(counts.begin(), counts.end(), count_out.data_ptr<int64_t>());
  return {out, inverse, count_out};
}

std::vector<Tensor> unique2_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const bool return_inverse = args[2].to_bool(), return_counts = args[3].to_bool();
  std::vector<Tensor> out;
  KILN_DISPATCH_ALL(self.dtype(), "_unique2", [&]<typename T>() {
    out = unique_flat<T>(self, return_inverse, return_counts);
  });
  return out;
}

// Slices along dim (moved to the front, flattened to rows), sorted lexicographically, grouped.
template <typename T>
std::vector<Tensor> unique_rows(const Tensor& self, int64_t dim) {
  using K = key_t<T>;
  const Tensor moved = self.movedim(dim, 0).contiguous();
  const int64_t n = moved.size(0), width = n == 0 ? 0 : moved.numel() / n;
  const T* p = moved.data_ptr<T>();
  auto row = [&](int64_t r, int64_t j) { return static_cast<K>(p[r * width + j]); };
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < width; ++j) {
      const K x = row(a, j), y = row(b, j);
      if (ascending(x, y)) return true;
      if (ascending(y, x)) return false;
    }
    return false;
  };
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < width; ++j) {
      if (!(row(a, j) == row(b, j))) return false;
    }
    return true;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> firsts, counts;
  Tensor inverse = empty_int64({n}, self.device());
  int64_t* inv = inverse.data_ptr<int64_t>();
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || !equal(order[i], order[i - 1])) {
      firsts.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inv[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
  }
  const auto m = static_cast<int64_t>(firsts.size());
  DimVector sizes(moved.sizes().begin(), moved.sizes().end());
  sizes[0] = m;
  Tensor values = empty(sizes, self.options());
  T* v = values.data_ptr<T>();
  for (int64_t u = 0; u < m; ++u) {
    std::copy(p + firsts[static_cast<size_t>(u)] * width,
              p + (firsts[static_cast<size_t>(u)] + 1) * width, v + u * width);
  }
  Tensor count_out = empty_int64({m}, self.device());
  std::copy(counts.begin(), counts.end(), count_out.data_ptr<int64_t>());
  return {values.movedim(0, dim).contiguous(), inverse, count_out};
}

std::vector<Tensor> unique_dim_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  KILN_CHECK_T(IndexError, self.dim() > 0,
               "unique_dim: dimension specified as {} but tensor has no dimensions",
               args[1].to_int());
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "unique_dim");
  if (self.numel() == 0) {
    KILN_CHECK(self.size(dim) == 0,
               "unique_dim: there are 0 sized dimensions, and they aren't selected, so unique "
               "cannot be applied (input {}, dim {})",
               sizes_str(self.sizes()), dim);
    return {empty(self.sizes(), self.options()), empty_int64({0}, self.device()),
            empty_int64({0}, self.device())};
  }
  std::vector<Tensor> out;
  KILN_DISPATCH_ALL(self.dtype(), "unique_dim",
                    [&]<typename T>() { out = unique_rows<T>(self, dim); });
  return out;
}

std::vector<Tensor> refuse_meta(const Stack& args) {
  KILN_CHECK(false,
             "unique: the number of unique values depends on the data (data-dependent), so it "
             "cannot be computed for a tensor on the meta device (input {})",
             sizes_str(args[0].to_tensor().sizes()));
  return {};
}

}  // namespace

KILN_OP(
    "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool "
    "return_counts=False) -> (Tensor, Tensor, Tensor)")
    .custom(DeviceType::CPU, unique2_cpu)
    .custom(DeviceType::Meta, refuse_meta)
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({4, 5}, kInt64, -3, 3), true, true, true}, "int64, all outputs"},
          {{make_sample({20}, kFloat32, -2, 2, 1).floor(), true, false, true}, "float32 counts"},
          {{make_noncontiguous_sample({3, 4}, kInt32, 0, 4, 2), true, true, false},
           "non-contiguous, inverse"},
          {{make_sample({7}, kFloat64, -3, 3, 3), true, false, false}, "values only"},
          {{make_sample({9}, kBool, 0, 1, 4), true, true, true}, "bool"},
          {{make_sample({}, kFloat32), true, true, true}, "0-dim"},
          {{make_sample({0, 3}, kFloat32), true, true, true}, "empty"},
          {{from_vector<double>({NAN, 1.0, NAN, 0.0}, {4}), true, false, true}, "NaNs distinct"},
      };
    });

KILN_OP(
    "unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool "
    "return_counts=False) -> (Tensor, Tensor, Tensor)")
    .custom(DeviceType::CPU, unique_dim_cpu)
    .custom(DeviceType::Meta, refuse_meta)
    .not_differentiable()
    .samples([] {
      Tensor rows = from_vector<int64_t>({3, 1, 2, 1, 3, 1, 0, 5, 2, 1}, {5, 2});
      return std::vector<Sample>{
          {{rows, 0, true, true, true}, "rows"},
          {{rows, 1, true, true, true}, "columns"},
          {{make_sample({4, 3, 2}, kInt32, 0, 2), 0, true, false, false}, "3-D dim 0"},
          {{make_sample({2, 6, 2}, kFloat32, 0, 2, 1).floor(), -2, true, true, true},
           "3-D middle dim"},
          {{make_sample({0, 3}, kFloat32), 0, true, true, true}, "empty selected dim"},
          {{make_sample({0, 3}, kFloat32), 1, true, true, true}, "empty other dim (raises)"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted, bool return_inverse,
                                          bool return_counts, std::optional<int64_t> dim,
                                          const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  std::vector<Tensor> out;
  if (dim) {
    static const ops::OpDef& op = ops::OpRegistry::instance().get("unique_dim");
    out = ops::call(op, {self, *dim, sorted, return_inverse, return_counts}, &loc);
  } else {
    static const ops::OpDef& op = ops::OpRegistry::instance().get("_unique2");
    out = ops::call(op, {self, sorted, return_inverse, return_counts}, &loc);
  }
  return {out[0], out[1], out[2]};
}

}  // namespace kiln
