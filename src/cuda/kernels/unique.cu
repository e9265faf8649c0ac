// unique (src/ops/sort/unique.cpp on the GPU): the items sorted stably by key (sort_keys.cuh),
// a flag where each group of equal items starts, the flags summed into group numbers. Elements
// sort with the radix sort; rows (unique_dim) with CUB's merge sort comparing rows of keys
// lexicographically. Equality is the CPU's ==: equal keys, except that a NaN equals nothing.
#include "cuda/kernels/sort_keys.cuh"

#include <cub/device/device_merge_sort.cuh>

namespace kiln::cuda::kernels {
namespace {

// Row a before row b: the first differing key decides (std::lexicographical_compare).
struct RowLess {
  const uint64_t* keys;
  int64_t width;
  __device__ bool operator()(int64_t a, int64_t b) const {
    const uint64_t* x = keys + a * width;
    const uint64_t* y = keys + b * width;
    for (int64_t j = 0; j < width; ++j) {
      if (x[j] != y[j]) return x[j] < y[j];
    }
    return false;
  }
};

__global__ void iota(int64_t* out, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) out[i] = i;
}

// starts[i] = 1 where the i-th item in order differs from the one before it. Item i's keys are
// keys[row(i) * width, + width), row(i) = order[i] (or i when order is null: keys sorted).
template <typename K>
__global__ void group_starts(int64_t* starts, const K* keys, const int64_t* order, int64_t n,
                             int64_t width, K nan, bool has_nan) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    bool start = i == 0;
    if (!start) {
      const K* x = keys + (order != nullptr ? order[i] : i) * width;
      const K* y = keys + (order != nullptr ? order[i - 1] : i - 1) * width;
      for (int64_t j = 0; j < width && !start; ++j)
        start = x[j] != y[j] || (has_nan && x[j] == nan);
    }
    starts[i] = start ? 1 : 0;
  }
}

// first[g] = where group g starts in order; inverse[order[i]] = the group of item i.
__global__ void scatter_groups(int64_t* first, int64_t* inverse, const int64_t* order,
                               const int64_t* group, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const int64_t g = group[i] - 1;
    if (i == 0 || group[i] != group[i - 1]) first[g] = i;
    if (inverse != nullptr) inverse[order[i]] = g;
  }
}

__global__ void group_counts(int64_t* counts, const int64_t* first, int64_t m, int64_t n) {
  for (int64_t g = thread_index(); g < m; g += thread_count()) {
    counts[g] = (g + 1 < m ? first[g + 1] : n) - first[g];
  }
}

// values[g * width + j] = in[order[first[g]] * width + j].
template <typename U>
__global__ void copy_firsts(U* values, const U* in, const int64_t* order, const int64_t* first,
                            int64_t m, int64_t width) {
  for (int64_t i = thread_index(); i < m * width; i += thread_count()) {
    const int64_t g = i / width, j = i % width;
    values[i] = in[order[first[g]] * width + j];
  }
}

}  // namespace

int64_t unique_groups(ScalarType type, const void* in, int64_t n, int64_t width, int64_t* order,
                      int64_t* group, Workspace& ws, cudaStream_t stream) {
  if (n == 0) return 0;
  const bool has_nan = is_float_type(type);
  if (width == 1) {
    auto run = [&]<typename K>() {
      auto* keys = static_cast<K*>(ws.bytes(static_cast<size_t>(n) * sizeof(K)));
      auto* sorted = static_cast<K*>(ws.bytes(static_cast<size_t>(n) * sizeof(K)));
      auto* positions = static_cast<int64_t*>(ws.bytes(static_cast<size_t>(n) * 8));
      to_keys(type, in, keys, n, false, false, stream);
      iota<<<blocks_for(n), kThreads, 0, stream>>>(positions, n);
      KILN_CUDA_CHECK_LAUNCH();
      radix_sort_pairs<K>(keys, sorted, positions, order, n, key_bits(type), ws, stream);
      group_starts<K><<<blocks_for(n), kThreads, 0, stream>>>(
          group, sorted, nullptr, n, 1, static_cast<K>(nan_key(type)), has_nan);
      KILN_CUDA_CHECK_LAUNCH();
    };
    if (wide_keys(type)) {
      run.template operator()<uint64_t>();
    } else {
      run.template operator()<uint32_t>();
    }
  } else {
    auto* keys = static_cast<uint64_t*>(ws.bytes(static_cast<size_t>(n * width) * 8));
    to_keys(type, in, keys, n * width, false, true, stream);
    iota<<<blocks_for(n), kThreads, 0, stream>>>(order, n);
    KILN_CUDA_CHECK_LAUNCH();
    with_temp_storage(ws, [&](void* temp, size_t& bytes) {
      return cub::DeviceMergeSort::StableSortKeys(temp, bytes, order, n, RowLess{keys, width},
                                                  stream);
    });
    group_starts<uint64_t><<<blocks_for(n), kThreads, 0, stream>>>(group, keys, order, n, width,
                                                                   nan_key(type), has_nan);
    KILN_CUDA_CHECK_LAUNCH();
  }
  inclusive_sum(group, n, ws, stream);
  int64_t groups = 0;
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(&groups, group + n - 1, sizeof groups, cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  return groups;
}

void unique_outputs(ScalarType type, const void* in, int64_t n, int64_t width, int64_t m,
                    const int64_t* order, const int64_t* group, void* values, int64_t* inverse,
                    int64_t* counts, Workspace& ws, cudaStream_t stream) {
  if (n == 0) return;
  auto* first = static_cast<int64_t*>(ws.bytes(static_cast<size_t>(m) * 8));
  scatter_groups<<<blocks_for(n), kThreads, 0, stream>>>(first, inverse, order, group, n);
  KILN_CUDA_CHECK_LAUNCH();
  if (counts != nullptr) {
    group_counts<<<blocks_for(m), kThreads, 0, stream>>>(counts, first, m, n);
    KILN_CUDA_CHECK_LAUNCH();
  }
  auto copy = [&](auto* typed) {
    using U = std::remove_pointer_t<decltype(typed)>;
    copy_firsts<U><<<blocks_for(m * width), kThreads, 0, stream>>>(
        static_cast<U*>(values), static_cast<const U*>(in), order, first, m, width);
  };
  switch (element_size(type)) {
    case 1:
      copy(static_cast<uint8_t*>(nullptr));
      break;
    case 2:
      copy(static_cast<uint16_t*>(nullptr));
      break;
    case 4:
      copy(static_cast<uint32_t*>(nullptr));
      break;
    default:
      copy(static_cast<uint64_t*>(nullptr));
      break;
  }
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::cuda::kernels
