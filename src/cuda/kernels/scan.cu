// cumsum/cumprod along rows: one device-wide CUB scan by key over all rows at once, the key of an
// element being its row, so that long rows, short rows and many rows all fill the device.
// Float32 accumulates in double and rounds every output to float, as the CPU's scan does
// (scan.kernel.cpp); float64 in double; int64 in int64 (wrapping as it does). The host converts
// other dtypes to these first, as the CPU op does.
#include "cuda/kernels/scan_sort.h"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

namespace kiln::cuda::kernels {
namespace {

struct RowOf {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t i) const { return i / n; }
};

// One functor for both scans: each CUB instantiation costs seconds of compile time.
template <typename A>
struct SumOrProduct {
  bool prod;
  __host__ __device__ A operator()(A a, A b) const { return prod ? a * b : a + b; }
};

struct ToDouble {
  __host__ __device__ double operator()(float v) const { return v; }
};
struct ToFloat {
  __host__ __device__ float operator()(double v) const { return static_cast<float>(v); }
};

template <typename A, typename In, typename Out>
void scan_by_row(In in, Out out, int64_t rows, int64_t n, bool prod, Workspace& ws,
                 cudaStream_t stream) {
  const auto row_of =
      thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{n});
  with_temp_storage(ws, [&](void* temp, size_t& bytes) {
    return cub::DeviceScan::InclusiveScanByKey(temp, bytes, row_of, in, out, SumOrProduct<A>{prod},
                                               rows * n, ::cuda::std::equal_to<int64_t>{}, stream);
  });
}

}  // namespace

void scan_rows(ScalarType type, const void* in, void* out, int64_t rows, int64_t n, bool prod,
               Workspace& ws, cudaStream_t stream) {
  if (rows * n == 0) return;
  switch (type) {
    case ScalarType::Float32:
      scan_by_row<double>(
          thrust::make_transform_iterator(static_cast<const float*>(in), ToDouble{}),
          thrust::make_transform_output_iterator(static_cast<float*>(out), ToFloat{}), rows, n,
          prod, ws, stream);
      break;
    case ScalarType::Float64:
      scan_by_row<double>(static_cast<const double*>(in), static_cast<double*>(out), rows, n, prod,
                          ws, stream);
      break;
    default:  // Int64: the host converts every other dtype to one of these three
      scan_by_row<int64_t>(static_cast<const int64_t*>(in), static_cast<int64_t*>(out), rows, n,
                           prod, ws, stream);
      break;
  }
}

}  // namespace kiln::cuda::kernels
