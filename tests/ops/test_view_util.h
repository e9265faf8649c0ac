#pragma once
// Helpers for the view-op tests. Inputs hold their own storage index (element at storage
// position i has value i), so a view's values name the storage positions it reads, and the
// expected values can be written down by index arithmetic independently of kiln.
#include "test_util.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/view.h>

#include <numeric>
#include <vector>

namespace kiln::testing {

// A contiguous tensor of the given sizes whose element at flat position i holds i.
inline Tensor iota(IntList sizes, DType dtype = kFloat64) {
  Tensor t = empty(sizes, dtype);
  int64_t n = t.numel();
  KILN_DISPATCH_ALL(dtype, "iota", [&]<typename T>() {
    T* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<float>(i));
  });
  return t;
}

inline std::vector<double> seq(int64_t begin, int64_t end, int64_t step = 1) {
  std::vector<double> v;
  for (int64_t i = begin; i < end; i += step) v.push_back(static_cast<double>(i));
  return v;
}

inline std::vector<int64_t> vec(IntList l) { return l.vec(); }

inline bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.storage().get() == b.storage().get();
}

// The same geometry over a storage of the same size on the meta device (no memory).
inline Tensor to_meta(const Tensor& t) {
  Storage s = make_storage(t.storage()->nbytes(), Device::meta());
  return Tensor(std::make_shared<TensorImpl>(s, t.dtype(), t.sym_sizes(), t.sym_strides(),
                                             t.impl()->sym_storage_offset()));
}

}  // namespace kiln::testing

// Expects sizes, strides and storage offset (written as PyTorch reports them).
#define EXPECT_GEOMETRY(t, sizes_, strides_, offset_)                              \
  do {                                                                             \
    EXPECT_EQ(::kiln::testing::vec((t).sizes()), std::vector<int64_t> sizes_);     \
    EXPECT_EQ(::kiln::testing::vec((t).strides()), std::vector<int64_t> strides_); \
    EXPECT_EQ((t).storage_offset(), offset_);                                      \
  } while (0)
