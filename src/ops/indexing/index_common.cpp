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

void check_in_bounds(int64_t value, int64_t dim, int64_t size, const char* op) {
  KILN_CHECK_T(IndexError, value >= 0 && value < size,
               "{}(): index {} is out of bounds for dimension {} with size {}", op, value, dim,
               size);
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
