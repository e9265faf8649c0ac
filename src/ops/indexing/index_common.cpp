#include "ops/indexing/index_common.h"

#include "ops/indexing/strided_loop.h"
#include "ops/reduction/reduce_meta.h"

namespace kiln::ops::indexing {

void check_index_dtype(const Tensor& index, bool allow_int32, const char* op) {
  const DType d = index.dtype();
  KILN_CHECK_T(TypeError, d == DType::Int64 || (allow_int32 && d == DType::Int32),
               "{}(): Expected dtype {} for index, got {}", op,
               allow_int32 ? "int32 or int64" : "int64", torch_type_name(d));
}

void fail_out_of_bounds(int64_t value, int64_t dim, int64_t size, const char* op) {
  throw IndexError(fmt::format("{}(): index {} is out of bounds for dimension {} with size {}", op,
                               value, dim, size));
}

std::string sizes_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// PyTorch's scatter shape rules; src is undefined for the value overloads.
void check_scatter(const Tensor& self, int64_t raw_dim, const Tensor& index, const Tensor& src,
                   const char* op) {
  check_index_dtype(index, /*allow_int32=*/false, op);
  const int64_t dim = wrap_dim(raw_dim, self.dim(), op);
  if (src.defined()) {
    KILN_CHECK_T(TypeError, src.dtype() == self.dtype(),
                 "{}(): Expected self.dtype to be equal to src.dtype (got {} and {})", op,
                 dtype_name(self.dtype()), dtype_name(src.dtype()));
  }
  if (index.numel() == 0) return;
  KILN_CHECK(nonempty_dim(index) == nonempty_dim(self),
             "{}(): Index tensor must have the same number of dimensions as self tensor (index "
             "{}, self {})",
             op, sizes_of(index), sizes_of(self));
  if (src.defined()) {
    KILN_CHECK(nonempty_dim(index) == nonempty_dim(src),
               "{}(): Index tensor must have the same number of dimensions as src tensor (index "
               "{}, src {})",
               op, sizes_of(index), sizes_of(src));
  }
  for (int64_t d = 0; d < nonempty_dim(self); ++d) {
    const bool too_big_for_self = d != dim && nonempty_size(index, d) > nonempty_size(self, d);
    const bool too_big_for_src = src.defined() && nonempty_size(index, d) > nonempty_size(src, d);
    KILN_CHECK(!too_big_for_self && !too_big_for_src,
               "{}(): Expected index {} to be no larger than self {} apart from dimension {}{}", op,
               sizes_of(index), sizes_of(self), dim,
               src.defined() ? fmt::format(" and to be no larger than src {}", sizes_of(src))
                             : std::string());
  }
}

std::vector<int64_t> read_indices(const Tensor& index, int64_t dim, int64_t size, const char* op) {
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(index.numel()));
  auto read = [&]<typename T>() {
    const T* p = index.data_ptr<T>();
    strided::for_each<1>(index.sizes(), {index.strides()}, [&](const std::array<int64_t, 1>& off) {
      const auto v = static_cast<int64_t>(p[off[0]]);
      check_in_bounds(v, dim, size, op);
      values.push_back(v);
    });
  };
  if (index.dtype() == DType::Int64) {
    read.template operator()<int64_t>();
  } else {
    read.template operator()<int32_t>();
  }
  return values;
}

}  // namespace kiln::ops::indexing
