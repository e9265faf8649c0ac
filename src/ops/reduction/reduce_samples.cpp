#include "ops/reduction/reduce_samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/view.h>

#include <limits>

namespace kiln::ops {
namespace {

using Dims = std::vector<int64_t>;

// An input with its dim list and keepdim, shared by the dim-list sample sets.
struct Case {
  Tensor self;
  IValue dims;
  bool keepdim;
  std::string what;
  bool reduces_empty = false;
};

std::vector<Case> dim_cases(DType dtype, double low, double high) {
  std::vector<Case> c = {
      {make_sample({3, 4, 5}, dtype, low, high), std::nullopt, false, "all dims"},
      {make_sample({3, 4, 5}, dtype, low, high, 1), Dims{1}, false, "middle dim"},
      {make_sample({3, 4, 5}, dtype, low, high, 2), Dims{0, 2}, true, "two dims keepdim"},
      {make_sample({3, 4, 5}, dtype, low, high, 3), Dims{-1}, false, "negative dim"},
      {make_sample({3, 4, 5}, dtype, low, high, 4), Dims{}, true, "empty list keepdim"},
      {make_noncontiguous_sample({4, 6}, dtype, low, high, 5), Dims{0}, false, "non-contiguous"},
      {make_sample({6, 5}, dtype, low, high, 6).t(), Dims{1}, false, "transposed inner"},
      {make_sample({6, 5}, dtype, low, high, 7).t(), Dims{0}, true, "transposed outer"},
      {make_sample({1000}, dtype, low, high, 8), Dims{0}, false, "1-D crossing SIMD width"},
      {make_sample({}, dtype, low, high, 9), Dims{0}, false, "0-dim"},
      {make_sample({0, 3}, dtype, low, high), Dims{1}, false, "empty, non-empty dim"},
      {make_sample({0, 3}, dtype, low, high), Dims{0}, true, "empty dim", true},
  };
  return c;
}

Stack with_dim_as_int(const Case& c) {
  // The first dim of the list as a single int (int dim schemas).
  auto dims = c.dims.is_none() ? Dims{} : c.dims.to_int_list();
  return {c.self, dims.empty() ? int64_t{0} : dims[0], c.keepdim};
}

}  // namespace

std::vector<Sample> sum_samples(bool floating_only) {
  std::vector<Sample> s;
  for (const Case& c : dim_cases(kFloat32, -3, 3)) {
    s.push_back({{c.self, c.dims, c.keepdim}, c.what});
  }
  s.push_back({{make_sample({4, 5}, kFloat32), Dims{1}, false, kFloat64}, "dtype float64"});
  s.push_back({{make_sample({4, 5}, kFloat64, -3, 3, 1), Dims{0}, false}, "float64"});
  if (floating_only) {
    s.push_back({{make_sample({4, 5}, kInt32, -10, 10), Dims{1}, false, kFloat32}, "int dtype="});
  } else {
    s.push_back({{make_sample({4, 5}, kInt32, -10, 10), Dims{1}, false}, "int32 to int64"});
    s.push_back({{make_sample({3, 5}, kBool), std::nullopt, false}, "bool to int64"});
  }
  return s;
}

std::vector<Sample> dim_list_samples(bool with_int, bool allow_empty, bool allow_all_dims) {
  std::vector<Sample> s;
  for (const Case& c : dim_cases(kFloat32, -3, 3)) {
    if (c.reduces_empty && !allow_empty) continue;
    if (!allow_all_dims && (c.dims.is_none() || c.dims.to_int_list().empty())) continue;
    s.push_back({{c.self, c.dims.is_none() ? IValue(Dims{}) : c.dims, c.keepdim}, c.what});
  }
  if (with_int) s.push_back({{make_sample({4, 5}, kInt64, -10, 10), Dims{1}, false}, "int64"});
  return s;
}

std::vector<Sample> full_reduction_samples(bool allow_empty, bool small_values) {
  const double low = small_values ? 0.5 : -3, high = small_values ? 1.5 : 3;
  std::vector<Sample> s = {
      {{make_sample({3, 4}, kFloat32, low, high)}, "2-D"},
      {{make_sample({1000}, kFloat32, low, high, 1)}, "1-D crossing SIMD width"},
      {{make_noncontiguous_sample({3, 7}, kFloat32, low, high, 2)}, "non-contiguous"},
      {{make_sample({}, kFloat32, low, high, 3)}, "0-dim"},
      {{make_sample({3, 4}, kInt64, -5, 5, 4)}, "int64"},
  };
  if (allow_empty) s.push_back({{make_sample({0, 3}, kFloat32)}, "empty"});
  return s;
}

std::vector<Sample> single_dim_samples(bool allow_empty, bool small_values) {
  const double low = small_values ? 0.5 : -3, high = small_values ? 1.5 : 3;
  std::vector<Sample> s;
  for (const Case& c : dim_cases(kFloat32, low, high)) {
    if (c.dims.is_none() || c.dims.to_int_list().size() != 1) continue;
    if (c.reduces_empty && !allow_empty) continue;
    s.push_back({with_dim_as_int(c), c.what});
  }
  s.push_back({{make_sample({4, 5}, kInt64, -5, 5), int64_t{1}, true}, "int64"});
  return s;
}

namespace {

// Rows with no zero, one zero and two zeros.
Tensor rows_with_zeros() {
  return from_vector<float>({0.5F, 1.2F, 0.9F, 1.4F,  //
                             0.7F, 0.0F, 1.3F, 0.8F,  //
                             0.0F, 1.1F, 0.6F, 0.0F},
                            {3, 4});
}

}  // namespace

std::vector<Sample> prod_zero_samples() {
  return {
      {{from_vector<float>({0.5F, 0.0F, 1.5F, 1.2F, 0.7F, 1.1F}, {2, 3})}, "one zero"},
      {{from_vector<float>({0.5F, 0.0F, 1.5F, 1.2F, 0.0F, 1.1F}, {2, 3})}, "two zeros"},
  };
}

std::vector<Sample> prod_dim_zero_samples() {
  return {
      {{rows_with_zeros(), int64_t{1}, false}, "rows with no, one and two zeros"},
      {{rows_with_zeros().t(), int64_t{0}, true}, "columns with zeros, keepdim"},
  };
}

std::vector<Sample> cumprod_zero_samples() {
  return {
      {{rows_with_zeros(), int64_t{1}}, "rows with no, one and two zeros"},
      {{rows_with_zeros(), int64_t{0}}, "columns with zeros"},
  };
}

std::vector<Sample> optional_dim_samples() {
  std::vector<Sample> s;
  for (const Case& c : dim_cases(kFloat32, -3, 3)) {
    if (c.reduces_empty) continue;
    if (c.dims.is_none()) {
      s.push_back({{c.self, std::nullopt, c.keepdim}, c.what});
      s.push_back({{c.self, std::nullopt, true}, c.what + " keepdim"});
    } else if (c.dims.to_int_list().size() == 1 && c.self.numel() > 0) {
      s.push_back({with_dim_as_int(c), c.what});
    }
  }
  s.push_back({{make_sample({6, 5}, kFloat32).t(), std::nullopt, false}, "transposed, flattened"});
  s.push_back({{make_sample({4, 5}, kInt64, -2, 2), int64_t{1}, false}, "int64 with ties"});
  return s;
}

std::vector<Sample> var_samples() {
  std::vector<Sample> s;
  for (const Case& c : dim_cases(kFloat32, -3, 3)) {
    if (c.self.numel() == 0) continue;
    s.push_back({{c.self, c.dims, std::nullopt, c.keepdim}, c.what});
  }
  Tensor x = make_sample({4, 6}, kFloat32);
  s.push_back({{x, Dims{1}, Scalar(int64_t{0}), false}, "correction 0"});
  s.push_back({{x, Dims{0}, Scalar(2), true}, "correction 2"});
  s.push_back({{x, Dims{1}, Scalar(0.5), false}, "correction 0.5"});
  s.push_back({{make_sample({4, 6}, kFloat64), Dims{1}, std::nullopt, false}, "float64"});
  return s;
}

std::vector<Sample> norm_samples() {
  std::vector<Sample> s;
  for (const Case& c : dim_cases(kFloat32, -3, 3)) {
    s.push_back({{c.self, Scalar(2), c.dims, c.keepdim}, c.what});
  }
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = make_sample({4, 6}, kFloat32);
  for (double ord : {1.0, 3.5, inf, -inf, 0.0, -1.0}) {
    s.push_back({{x, Scalar(ord), Dims{1}, false}, "ord " + Scalar(ord).str()});
  }
  s.push_back({{x, Scalar(2), std::nullopt, false, kFloat64}, "dtype float64"});
  // A zero row: the 2-norm's gradient there is 0 (as PyTorch), and so are the differences.
  Tensor zero_row = make_sample({3, 4}, kFloat32);
  zero_row.select(0, 1).zero_();
  s.push_back({{zero_row, Scalar(2), Dims{1}, false}, "a zero row"});
  return s;
}

namespace {

// Floats with some exact zeros, so that any/all are not trivially true.
Tensor with_zeros(IntList sizes, uint64_t seed) {
  Tensor t = make_sample(sizes, kInt64, -1, 2, seed);
  return t.to(kFloat32);
}

}  // namespace

std::vector<Sample> logical_full_samples() {
  return {
      {{with_zeros({3, 4}, 0)}, "float with zeros"},
      {{make_sample({3, 4}, kBool, 0, 1, 1)}, "bool"},
      {{make_sample({5}, kInt32, 0, 2, 2)}, "int32"},
      {{make_sample({5}, kUInt8, 0, 2, 3)}, "uint8 gives uint8"},
      {{make_sample({}, kFloat32, -3, 3, 4)}, "0-dim"},
      {{make_sample({0, 3}, kFloat32)}, "empty"},
  };
}

std::vector<Sample> logical_dim_samples() {
  return {
      {{with_zeros({3, 4}, 0), int64_t{1}, false}, "float with zeros"},
      {{make_sample({3, 4}, kBool, 0, 1, 1), int64_t{0}, true}, "bool keepdim"},
      {{make_sample({4, 3}, kBool, 0, 1, 2).t(), int64_t{-1}, false}, "transposed bool"},
      {{make_sample({5, 2}, kUInt8, 0, 2, 3), int64_t{0}, false}, "uint8"},
      {{make_sample({}, kFloat32, -3, 3, 4), int64_t{0}, false}, "0-dim"},
      {{make_sample({0, 3}, kFloat32), int64_t{0}, false}, "empty dim"},
  };
}

std::vector<Sample> scan_samples(bool is_prod) {
  const double low = is_prod ? 0.5 : -3, high = is_prod ? 1.5 : 3;
  return {
      {{make_sample({4, 5}, kFloat32, low, high), int64_t{1}}, "inner dim"},
      {{make_sample({4, 5}, kFloat32, low, high, 1), int64_t{0}}, "outer dim"},
      {{make_sample({3, 4, 5}, kFloat32, low, high, 2), int64_t{-2}}, "negative middle dim"},
      {{make_noncontiguous_sample({4, 6}, kFloat32, low, high, 3), int64_t{1}}, "non-contiguous"},
      {{make_sample({6, 4}, kFloat32, low, high, 4).t(), int64_t{1}}, "transposed"},
      {{make_sample({}, kFloat32, low, high, 5), int64_t{0}}, "0-dim"},
      {{make_sample({0, 3}, kFloat32), int64_t{0}}, "empty"},
      {{make_sample({4, 5}, kInt32, -3, 4, 6), int64_t{1}}, "int32 to int64"},
      {{make_sample({4, 5}, kFloat32, low, high, 7), int64_t{0}, kFloat64}, "dtype float64"},
  };
}

}  // namespace kiln::ops
