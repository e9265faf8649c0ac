// Indexing kernels (interface and semantics in indexing.h). Kernels that only move elements
// (gather, scatter, the advanced-indexing gather and assignment) move bits, one instantiation per
// element size; those that compute (scatter_reduce, accumulate, searchsorted, nonzero) one per
// dtype. Every index is checked before it is used: an out-of-range one is recorded in an
// IndexFault and its element skipped, so a bad index never touches memory outside the tensors.
#include "cuda/cuda_check.h"
#include "cuda/kernels/indexing.h"
#include "cuda/kernels/types.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::cuda::kernels {
namespace {

// Calls f(Tag<E>{}) with E the unsigned integer type of the dtype's size.
template <typename F>
void dispatch_bits(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::Int8:
      return f(Tag<uint8_t>{});
    case ScalarType::Int16:
    case ScalarType::Float16:
    case ScalarType::BFloat16:
      return f(Tag<uint16_t>{});
    case ScalarType::Int32:
    case ScalarType::Float32:
      return f(Tag<uint32_t>{});
    case ScalarType::Int64:
    case ScalarType::Float64:
      return f(Tag<uint64_t>{});
  }
}

__device__ __forceinline__ int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_count() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// The K operands' element offsets at flat index i (all equal to i on the contiguous path).
template <int K>
__device__ __forceinline__ void offsets_at(int64_t i, const Geometry& g, const Offsets<K>& s,
                                           int64_t (&off)[K]) {
  if (g.contiguous) {
    for (int k = 0; k < K; ++k) off[k] = i;
  } else {
    offsets_of<K>(i, g, s, off);
  }
}

__device__ __forceinline__ void record_fault(IndexFault* fault, int64_t value,
                                             const IndexedDim& d) {
  // The first thread to flag writes the details; the others leave them.
  if (atomicCAS(&fault->flagged, 0ull, 1ull) == 0ull) {
    fault->value = value;
    fault->dim = d.dim;
    fault->size = d.size;
  }
}

// ---- arithmetic as the CPU kernels do it: in Acc<T>, integers wrapping, bool as logic ----

template <typename T>
__device__ __forceinline__ T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return convert<T>(convert<Acc<T>>(a) + convert<Acc<T>>(b));
  }
}

template <typename T>
__device__ __forceinline__ T multiply(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return convert<T>(convert<Acc<T>>(a) * convert<Acc<T>>(b));
  }
}

template <typename A>
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  return false;
}

// acc combined with v; amax and amin let a NaN through, as on the CPU.
template <typename T>
__device__ __forceinline__ T combine(T acc, T v, ScatterReduce r) {
  const Acc<T> a = convert<Acc<T>>(acc), b = convert<Acc<T>>(v);
  switch (r) {
    case ScatterReduce::Sum:
    case ScatterReduce::Mean:
      return add(acc, v);
    case ScatterReduce::Prod:
      return multiply(acc, v);
    case ScatterReduce::Amax:
      return (is_nan(b) || b > a) ? v : acc;
    case ScatterReduce::Amin:
      return (is_nan(b) || b < a) ? v : acc;
  }
  return acc;
}

constexpr int kBits = 8;

template <typename T>
__device__ __forceinline__ T lowest() {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(uint64_t{1} << (sizeof(T) * kBits - 1));
    }
    return T(0);
  } else {
    return convert<T>(-INFINITY);
  }
}

template <typename T>
__device__ __forceinline__ T highest() {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>((uint64_t{1} << (sizeof(T) * kBits - 1)) - 1);
    }
    return static_cast<T>(~uint64_t{0});
  } else {
    return convert<T>(INFINITY);
  }
}

template <typename T>
__device__ __forceinline__ T identity(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Prod:
      return convert<T>(1);
    case ScatterReduce::Amax:
      return lowest<T>();
    case ScatterReduce::Amin:
      return highest<T>();
    default:
      return convert<T>(0);
  }
}

// ---- atomics ----

// *address = f(*address) atomically, by compare-and-swap on the aligned word that holds it: the
// 1- and 2-byte types have no CAS of their own, so theirs is the 4-byte word around them (the
// caching allocator's blocks are multiples of 512 bytes, so that word lies inside the block; the
// neighbours' bytes are written back unchanged).
template <typename T, typename F>
__device__ void atomic_update(T* address, F f) {
  if constexpr (sizeof(T) == 8) {
    auto* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word;
    while (true) {
      T value;
      memcpy(&value, &seen, sizeof(T));
      const T next = f(value);
      unsigned long long bits;
      memcpy(&bits, &next, sizeof(T));
      if (bits == seen) return;  // nothing changes (amax of a smaller value, ...)
      const unsigned long long before = atomicCAS(word, seen, bits);
      if (before == seen) return;
      seen = before;
    }
  } else {
    const auto at = reinterpret_cast<uintptr_t>(address);
    auto* word = reinterpret_cast<unsigned int*>(at & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(at & 3) * kBits;
    const unsigned mask =
        sizeof(T) == 4 ? ~0u : ((1u << (sizeof(T) * kBits)) - 1u) << shift;  // little-endian
    unsigned seen = *word;
    while (true) {
      const unsigned old_bits = (seen & mask) >> shift;
      T value;
      memcpy(&value, &old_bits, sizeof(T));
      const T next = f(value);
      unsigned new_bits = 0;
      memcpy(&new_bits, &next, sizeof(T));
      const unsigned replaced = (seen & ~mask) | (new_bits << shift);
      if (replaced == seen) return;
      const unsigned before = atomicCAS(word, seen, replaced);
      if (before == seen) return;
      seen = before;
    }
  }
}

// *address += v atomically: the hardware's atomicAdd where it has one for T (16-bit floats from
// sm_80), a CAS loop otherwise (bool, 8- and 16-bit integers).
template <typename T>
__device__ __forceinline__ void atomic_add(T* address, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(address, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: the unsigned sum has the signed sum's bits.
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(v));
  } else if constexpr (kIsHalf<T>) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    atomic_update(address, [v](T x) { return add(x, v); });
#else
    atomicAdd(address, v);
#endif
  } else {
    atomic_update(address, [v](T x) { return add(x, v); });
  }
}

// ---- gather and scatter along one dim ----

template <typename E>
__global__ void gather_kernel(Geometry g, E* out, const int64_t* index, const E* self, Offsets<3> s,
                              IndexedDim d, IndexFault* fault) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[3];
    offsets_at<3>(i, g, s, off);
    const int64_t v = index[off[1]];
    if (v < 0 || v >= d.size) {
      record_fault(fault, v, d);
      continue;
    }
    out[off[0]] = self[off[2] + v * d.stride];
  }
}

template <typename E>
__global__ void scatter_kernel(Geometry g, E* target, const int64_t* index, const E* src,
                               Offsets<3> s, IndexedDim d, IndexFault* fault) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[3];
    offsets_at<3>(i, g, s, off);
    const int64_t v = index[off[1]];
    if (v < 0 || v >= d.size) {
      record_fault(fault, v, d);
      continue;
    }
    target[off[0] + v * d.stride] = src[off[2]];
  }
}

template <typename T>
__global__ void fill_identity_kernel(Geometry g, T* target, const int64_t* index, Offsets<2> s,
                                     ScatterReduce r, IndexedDim d, IndexFault* fault) {
  const T value = identity<T>(r);
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[2];
    offsets_at<2>(i, g, s, off);
    const int64_t v = index[off[1]];
    if (v < 0 || v >= d.size) {
      record_fault(fault, v, d);
      continue;
    }
    target[off[0] + v * d.stride] = value;  // duplicates write the same value
  }
}

template <typename T>
__global__ void scatter_reduce_kernel(Geometry g, T* target, const int64_t* index, const T* src,
                                      Offsets<3> s, ScatterReduce r, int64_t* counts, IndexedDim d,
                                      IndexFault* fault) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[3];
    offsets_at<3>(i, g, s, off);
    const int64_t v = index[off[1]];
    if (v < 0 || v >= d.size) {
      record_fault(fault, v, d);
      continue;
    }
    const int64_t p = off[0] + v * d.stride;
    const T x = src[off[2]];
    if (r == ScatterReduce::Sum || r == ScatterReduce::Mean) {
      atomic_add(target + p, x);
    } else {
      atomic_update(target + p, [x, r](T a) { return combine(a, x, r); });
    }
    if (counts != nullptr) atomicAdd(reinterpret_cast<unsigned long long*>(counts + p), 1ull);
  }
}

template <typename T>
__global__ void mean_divide_kernel(T* target, const int64_t* counts, int64_t n, bool include_self) {
  for (int64_t i = first_index(); i < n; i += thread_count()) {
    const int64_t c = counts[i] + (include_self ? 1 : 0);
    if (c <= 1) continue;
    if constexpr (std::is_integral_v<T>) {
      // Floor division, as the CPU's integer mean.
      const auto q = static_cast<int64_t>(target[i]);
      int64_t f = q / c;
      if (q % c != 0 && (q < 0) != (c < 0)) --f;
      target[i] = static_cast<T>(f);
    } else {
      target[i] = convert<T>(convert<Acc<T>>(target[i]) / static_cast<Acc<T>>(c));
    }
  }
}

// ---- advanced indexing through a table of element offsets ----

template <typename I>
__global__ void add_offsets_kernel(Geometry g, int64_t* offsets, const I* index, Offsets<2> s,
                                   IndexedDim d, IndexFault* fault) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[2];
    offsets_at<2>(i, g, s, off);
    int64_t v = static_cast<int64_t>(index[off[1]]);
    if (v < -d.size || v >= d.size) {
      record_fault(fault, v, d);
      continue;  // the offset stays inside self: later kernels read no stray memory
    }
    if (v < 0) v += d.size;
    offsets[off[0]] += v * d.stride;  // one thread per entry: no race
  }
}

template <typename E>
__global__ void gather_offsets_kernel(Geometry g, E* out, const E* self, const int64_t* offsets,
                                      Offsets<3> s) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[3];
    offsets_at<3>(i, g, s, off);
    out[off[0]] = self[off[1] + offsets[off[2]]];
  }
}

template <typename E>
__global__ void put_offsets_kernel(Geometry g, E* target, const int64_t* offsets, const E* values,
                                   Offsets<3> s) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[3];
    offsets_at<3>(i, g, s, off);
    target[off[0] + offsets[off[1]]] = values[off[2]];
  }
}

template <typename T>
__global__ void accumulate_offsets_kernel(Geometry g, T* target, const int64_t* offsets,
                                          const T* values, Offsets<3> s) {
  for (int64_t i = first_index(); i < g.numel; i += thread_count()) {
    int64_t off[3];
    offsets_at<3>(i, g, s, off);
    atomic_add(target + off[0] + offsets[off[1]], values[off[2]]);
  }
}

// ---- searchsorted ----

// Bounds as aten compares them (!(x >= v), !(x > v)), so NaNs land where PyTorch puts them.
template <typename T, typename I>
__global__ void searchsorted_kernel(SearchArgs a) {
  using K = Acc<T>;
  const auto* boundaries = static_cast<const T*>(a.boundaries);
  const auto* values = static_cast<const T*>(a.values);
  auto* out = static_cast<I*>(a.out);
  for (int64_t i = first_index(); i < a.count; i += thread_count()) {
    const int64_t base = a.values_per_row == 0 ? 0 : (i / a.values_per_row) * a.length;
    const K v = convert<K>(values[i]);
    int64_t lo = 0, hi = a.length;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      int64_t at = mid;
      if (a.sorter != nullptr) {
        at = a.sorter[base + mid];
        if (at < 0 || at >= a.length) break;  // check_in_range reports it
      }
      const K x = convert<K>(boundaries[base + at]);
      if (a.right ? !(x > v) : !(x >= v)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    out[i] = static_cast<I>(lo);
  }
}

__global__ void check_in_range_kernel(const int64_t* data, int64_t count, IndexedDim d,
                                      IndexFault* fault) {
  for (int64_t i = first_index(); i < count; i += thread_count()) {
    if (data[i] < 0 || data[i] >= d.size) record_fault(fault, data[i], d);
  }
}

// ---- nonzero ----

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
// At most this many chunks (one block each), so the single-block scan stays short.
constexpr int64_t kMaxChunks = 65536;
constexpr int64_t kMinTilesPerChunk = 16;

int64_t chunk_length(int64_t numel) {
  const int64_t tiles = (numel + kThreads - 1) / kThreads;
  return std::max(kMinTilesPerChunk, (tiles + kMaxChunks - 1) / kMaxChunks) * kThreads;
}

template <typename T>
__device__ __forceinline__ bool is_nonzero(T v) {
  if constexpr (kIsHalf<T>) {
    return convert<float>(v) != 0.0f;
  } else {
    return v != T(0);
  }
}

// Whether element i (row-major) of self is nonzero.
template <typename T>
__device__ __forceinline__ bool nonzero_at(int64_t i, const Geometry& g, const T* self,
                                           const Offsets<1>& s) {
  int64_t off[1];
  offsets_at<1>(i, g, s, off);
  return is_nonzero(self[off[0]]);
}

// One block per chunk; tiles of blockDim elements in order.
template <typename T>
__global__ void count_chunks_kernel(Geometry g, const T* self, Offsets<1> s, int64_t chunk,
                                    int64_t* counts) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t last = first + chunk < g.numel ? first + chunk : g.numel;
  int64_t total = 0;
  for (int64_t tile = first; tile < last; tile += blockDim.x) {
    const int64_t i = tile + threadIdx.x;
    total += __syncthreads_count(i < last && nonzero_at(i, g, self, s));
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// counts[0 .. n) becomes its exclusive prefix sum, counts[n] the total; one block.
__global__ void exclusive_scan_kernel(int64_t* counts, int64_t n) {
  __shared__ int64_t partial[kThreads];
  const int64_t per_thread = (n + kThreads - 1) / kThreads;
  const int64_t first = static_cast<int64_t>(threadIdx.x) * per_thread;
  const int64_t last = first + per_thread < n ? first + per_thread : n;
  int64_t sum = 0;
  for (int64_t j = first; j < last; ++j) sum += counts[j];
  partial[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t running = 0;
    for (int t = 0; t < kThreads; ++t) {
      const int64_t p = partial[t];
      partial[t] = running;
      running += p;
    }
    counts[n] = running;
  }
  __syncthreads();
  int64_t running = partial[threadIdx.x];
  for (int64_t j = first; j < last; ++j) {
    const int64_t c = counts[j];
    counts[j] = running;
    running += c;
  }
}

// Each tile's nonzeros get consecutive rows in element order: a warp's rank from its ballot, the
// warps before it from their counts in shared memory.
template <typename T>
__global__ void write_coordinates_kernel(Geometry g, const T* self, Offsets<1> s, int64_t chunk,
                                         const int64_t* chunk_starts, NonzeroShape shape,
                                         int64_t* out) {
  __shared__ int warp_counts[kThreads / kWarp];
  const int64_t first = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t last = first + chunk < g.numel ? first + chunk : g.numel;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  int64_t next_row = chunk_starts[blockIdx.x];
  for (int64_t tile = first; tile < last; tile += blockDim.x) {
    const int64_t i = tile + threadIdx.x;
    const bool nonzero = i < last && nonzero_at(i, g, self, s);
    const unsigned ballot = __ballot_sync(kFullMask, nonzero);
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    int before = 0, tile_total = 0;
    for (int w = 0; w < kThreads / kWarp; ++w) {
      if (w < warp) before += warp_counts[w];
      tile_total += warp_counts[w];
    }
    if (nonzero) {
      const int64_t row = next_row + before + __popc(ballot & ((1u << lane) - 1u));
      int64_t rest = i;
      for (int d = shape.ndim - 1; d >= 0; --d) {
        out[row * shape.ndim + d] = rest % shape.sizes[d];
        rest /= shape.sizes[d];
      }
    }
    next_row += tile_total;
    __syncthreads();  // warp_counts is rewritten by the next tile
  }
}

}  // namespace

void gather(const Geometry& g, const Operand& out, const Operand& index, const Operand& self,
            IndexedDim d, IndexFault* fault, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[3] = {&out, &index, &self};
  const Offsets<3> s = offsets_from<3>(ops);
  dispatch_bits(out.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    gather_kernel<E><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<E*>(out.data), static_cast<const int64_t*>(index.data),
        static_cast<const E*>(self.data), s, d, fault);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void scatter(const Geometry& g, const Operand& target, const Operand& index, const Operand& src,
             IndexedDim d, IndexFault* fault, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[3] = {&target, &index, &src};
  const Offsets<3> s = offsets_from<3>(ops);
  dispatch_bits(target.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    scatter_kernel<E><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<E*>(target.data), static_cast<const int64_t*>(index.data),
        static_cast<const E*>(src.data), s, d, fault);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void scatter_fill_identity(const Geometry& g, const Operand& target, const Operand& index,
                           ScatterReduce reduce, IndexedDim d, IndexFault* fault,
                           cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[2] = {&target, &index};
  const Offsets<2> s = offsets_from<2>(ops);
  dispatch(target.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_identity_kernel<T><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<T*>(target.data), static_cast<const int64_t*>(index.data), s, reduce, d,
        fault);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void scatter_reduce(const Geometry& g, const Operand& target, const Operand& index,
                    const Operand& src, ScatterReduce reduce, int64_t* counts, IndexedDim d,
                    IndexFault* fault, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[3] = {&target, &index, &src};
  const Offsets<3> s = offsets_from<3>(ops);
  dispatch(target.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatter_reduce_kernel<T><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<T*>(target.data), static_cast<const int64_t*>(index.data),
        static_cast<const T*>(src.data), s, reduce, counts, d, fault);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void scatter_mean_divide(ScalarType type, void* target, const int64_t* counts, int64_t n,
                         bool include_self, cudaStream_t stream) {
  if (n == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    mean_divide_kernel<T>
        <<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(target), counts, n, include_self);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void add_index_offsets(const Geometry& g, const Operand& offsets, const Operand& index,
                       IndexedDim d, IndexFault* fault, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[2] = {&offsets, &index};
  const Offsets<2> s = offsets_from<2>(ops);
  auto launch = [&](auto tag) {
    using I = typename decltype(tag)::type;
    add_offsets_kernel<I><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<int64_t*>(offsets.data), static_cast<const I*>(index.data), s, d, fault);
    KILN_CUDA_CHECK_LAUNCH();
  };
  if (index.type == ScalarType::Int32) {
    launch(Tag<int32_t>{});
  } else {
    launch(Tag<int64_t>{});
  }
}

void gather_at_offsets(const Geometry& g, const Operand& out, const Operand& self,
                       const Operand& offsets, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[3] = {&out, &self, &offsets};
  const Offsets<3> s = offsets_from<3>(ops);
  dispatch_bits(out.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    gather_offsets_kernel<E><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<E*>(out.data), static_cast<const E*>(self.data),
        static_cast<const int64_t*>(offsets.data), s);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void put_at_offsets(const Geometry& g, const Operand& target, const Operand& offsets,
                    const Operand& values, bool accumulate, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[3] = {&target, &offsets, &values};
  const Offsets<3> s = offsets_from<3>(ops);
  const auto* table = static_cast<const int64_t*>(offsets.data);
  if (accumulate) {
    dispatch(target.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      accumulate_offsets_kernel<T><<<blocks_for(g.numel), kThreads, 0, stream>>>(
          g, static_cast<T*>(target.data), table, static_cast<const T*>(values.data), s);
      KILN_CUDA_CHECK_LAUNCH();
    });
    return;
  }
  dispatch_bits(target.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    put_offsets_kernel<E><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<E*>(target.data), table, static_cast<const E*>(values.data), s);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void searchsorted(const SearchArgs& a, cudaStream_t stream) {
  if (a.count == 0) return;
  dispatch(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.out_int32) {
      searchsorted_kernel<T, int32_t><<<blocks_for(a.count), kThreads, 0, stream>>>(a);
    } else {
      searchsorted_kernel<T, int64_t><<<blocks_for(a.count), kThreads, 0, stream>>>(a);
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void check_in_range(const int64_t* data, int64_t count, int64_t size, IndexFault* fault,
                    cudaStream_t stream) {
  if (count == 0) return;
  IndexedDim d;
  d.size = size;
  check_in_range_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count, d, fault);
  KILN_CUDA_CHECK_LAUNCH();
}

int64_t nonzero_chunks(int64_t numel) {
  const int64_t chunk = chunk_length(numel);
  return (numel + chunk - 1) / chunk;
}

void nonzero_count(const Geometry& g, const Operand& self, int64_t* chunk_starts,
                   cudaStream_t stream) {
  const int64_t chunks = nonzero_chunks(g.numel);
  if (chunks > 0) {
    const Operand* ops[1] = {&self};
    const Offsets<1> s = offsets_from<1>(ops);
    dispatch(self.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      count_chunks_kernel<T><<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(
          g, static_cast<const T*>(self.data), s, chunk_length(g.numel), chunk_starts);
      KILN_CUDA_CHECK_LAUNCH();
    });
  }
  exclusive_scan_kernel<<<1, kThreads, 0, stream>>>(chunk_starts, chunks);
  KILN_CUDA_CHECK_LAUNCH();
}

void nonzero_write(const Geometry& g, const Operand& self, const NonzeroShape& shape,
                   const int64_t* chunk_starts, int64_t* out, cudaStream_t stream) {
  const int64_t chunks = nonzero_chunks(g.numel);
  if (chunks == 0 || shape.ndim == 0) return;  // a 0-dim self has no coordinates to write
  const Operand* ops[1] = {&self};
  const Offsets<1> s = offsets_from<1>(ops);
  dispatch(self.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    write_coordinates_kernel<T><<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(
        g, static_cast<const T*>(self.data), s, chunk_length(g.numel), chunk_starts, shape, out);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::cuda::kernels
