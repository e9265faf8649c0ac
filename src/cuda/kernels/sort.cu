// sort: every row's keys (sort_keys.cuh) sorted stably together with their positions in the row
// (sort_cub.cu), then the values gathered through the sorted positions, so that they are the
// input's own elements (a NaN keeps its payload, -0.0 its sign) as the CPU kernel writes them.
// A descending sort sorts complemented keys ascending: ties stay in input order, as
// std::stable_sort with the CPU's descending comparator keeps them.
#include "cuda/kernels/sort_keys.cuh"

namespace kiln::cuda::kernels {
namespace {

template <typename T, typename K>
__global__ void to_keys_kernel(K* keys, const T* in, int64_t n, bool descending) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    Bits<T> b = ordered_bits(in[i]);
    if (descending) b = Bits<T>(~b);
    keys[i] = K(b);
  }
}

__global__ void positions_in_rows(int64_t* positions, int64_t total, int64_t n) {
  for (int64_t i = thread_index(); i < total; i += thread_count()) positions[i] = i % n;
}

template <typename U>
__global__ void gather_kernel(U* out, const U* in, int64_t n, const int64_t* indices, int64_t k,
                              int64_t total) {
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    out[i] = in[(i / k) * n + indices[i]];
  }
}

}  // namespace

void to_keys(ScalarType type, const void* in, void* keys, int64_t n, bool descending, bool wide,
             cudaStream_t stream) {
  if (n == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x = static_cast<const T*>(in);
    if (sizeof(T) == 8 || wide) {
      to_keys_kernel<T, uint64_t>
          <<<blocks_for(n), kThreads, 0, stream>>>(static_cast<uint64_t*>(keys), x, n, descending);
    } else {
      if constexpr (sizeof(T) <= 4) {
        to_keys_kernel<T, uint32_t><<<blocks_for(n), kThreads, 0, stream>>>(
            static_cast<uint32_t*>(keys), x, n, descending);
      }
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void gather_rows(int element_size, const void* in, int64_t n, const int64_t* indices, int64_t k,
                 int64_t rows, void* out, cudaStream_t stream) {
  const int64_t total = rows * k;
  if (total == 0) return;
  auto launch = [&](auto* typed_out) {
    using U = std::remove_pointer_t<decltype(typed_out)>;
    gather_kernel<U><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<U*>(out), static_cast<const U*>(in), n, indices, k, total);
  };
  switch (element_size) {
    case 1:
      launch(static_cast<uint8_t*>(nullptr));
      break;
    case 2:
      launch(static_cast<uint16_t*>(nullptr));
      break;
    case 4:
      launch(static_cast<uint32_t*>(nullptr));
      break;
    default:
      launch(static_cast<uint64_t*>(nullptr));
      break;
  }
  KILN_CUDA_CHECK_LAUNCH();
}

void sort_rows(ScalarType type, const void* in, void* values, int64_t* indices, int64_t rows,
               int64_t n, bool descending, Workspace& ws, cudaStream_t stream) {
  const int64_t total = rows * n;
  if (total == 0) return;
  auto run = [&]<typename K>() {
    auto* keys_in = static_cast<K*>(ws.bytes(static_cast<size_t>(total) * sizeof(K)));
    auto* keys_out = static_cast<K*>(ws.bytes(static_cast<size_t>(total) * sizeof(K)));
    auto* positions = static_cast<int64_t*>(ws.bytes(static_cast<size_t>(total) * 8));
    to_keys(type, in, keys_in, total, descending, false, stream);
    positions_in_rows<<<blocks_for(total), kThreads, 0, stream>>>(positions, total, n);
    KILN_CUDA_CHECK_LAUNCH();
    if (rows == 1) {
      radix_sort_pairs<K>(keys_in, keys_out, positions, indices, n, key_bits(type), ws, stream);
    } else {
      segmented_sort_pairs<K>(keys_in, keys_out, positions, indices, rows, n, ws, stream);
    }
  };
  if (wide_keys(type)) {
    run.template operator()<uint64_t>();
  } else {
    run.template operator()<uint32_t>();
  }
  if (values != nullptr) gather_rows(element_size(type), in, n, indices, n, rows, values, stream);
}

}  // namespace kiln::cuda::kernels
