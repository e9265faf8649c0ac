// The CUB device-wide sorts and the scan that sort.cu, topk.cu and unique.cu share, instantiated
// once here for the two key widths (CUB's headers take most of the layer's compile time). One
// sequence goes through DeviceRadixSort (the whole device on it); several rows through
// DeviceSegmentedSort, which sorts small rows a warp each and large ones a block each. Both are
// stable; each call asks for its temporary storage size and takes it from the Workspace.
#include "cuda/kernels/sort_keys.cuh"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

namespace kiln::cuda::kernels {
namespace {

struct RowStart {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t row) const { return row * n; }
};

}  // namespace

template <typename K>
void radix_sort_pairs(const K* keys_in, K* keys_out, const int64_t* values_in, int64_t* values_out,
                      int64_t n, int end_bit, Workspace& ws, cudaStream_t stream) {
  with_temp_storage(ws, [&](void* temp, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in, values_out, n,
                                           0, end_bit, stream);
  });
}

template <typename K>
void segmented_sort_pairs(const K* keys_in, K* keys_out, const int64_t* values_in,
                          int64_t* values_out, int64_t rows, int64_t n, Workspace& ws,
                          cudaStream_t stream) {
  const auto begins =
      thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowStart{n});
  const auto ends =
      thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(1), RowStart{n});
  with_temp_storage(ws, [&](void* temp, size_t& bytes) {
    return cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, keys_in, keys_out, values_in,
                                                     values_out, rows * n, rows, begins, ends,
                                                     stream);
  });
}

void inclusive_sum(int64_t* data, int64_t n, Workspace& ws, cudaStream_t stream) {
  with_temp_storage(ws, [&](void* temp, size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(temp, bytes, data, data, n, stream);
  });
}

template void radix_sort_pairs<uint32_t>(const uint32_t*, uint32_t*, const int64_t*, int64_t*,
                                         int64_t, int, Workspace&, cudaStream_t);
template void radix_sort_pairs<uint64_t>(const uint64_t*, uint64_t*, const int64_t*, int64_t*,
                                         int64_t, int, Workspace&, cudaStream_t);
template void segmented_sort_pairs<uint32_t>(const uint32_t*, uint32_t*, const int64_t*, int64_t*,
                                             int64_t, int64_t, Workspace&, cudaStream_t);
template void segmented_sort_pairs<uint64_t>(const uint64_t*, uint64_t*, const int64_t*, int64_t*,
                                             int64_t, int64_t, Workspace&, cudaStream_t);

}  // namespace kiln::cuda::kernels
