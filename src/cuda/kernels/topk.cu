// topk: the CPU kernel (src/ops/sort/topk.cpp) selects with libstdc++'s std::partial_sort when
// k * 64 <= n, else std::nth_element and, for sorted output, std::sort of the first k - 1. Those
// are not stable: which of equal elements come out, in what order, and the order of unsorted
// results are whatever the algorithms' steps leave. To give the same results the GPU runs the
// same steps: the algorithms below are libstdc++ 12's (bits/stl_algo.h, bits/stl_heap.h),
// statement for statement, one thread per row. Every comparison is of keys (sort_keys.cuh), which
// order exactly as the CPU's comparator orders values, so every branch goes the same way. The
// recursion of introsort runs from an explicit stack: its ranges are disjoint, so their order
// does not change the result. Index checks that libstdc++ leaves to its sentinels are kept as
// guards against reading outside a row; with a strict weak order they never fire.
#include "cuda/kernels/sort_keys.cuh"

#include <algorithm>
#include <bit>

namespace kiln::cuda::kernels {
namespace {

struct Item {
  uint64_t key;
  int64_t index;
};

template <bool Largest>
struct Before {
  __device__ bool operator()(const Item& a, const Item& b) const {
    return Largest ? a.key > b.key : a.key < b.key;
  }
};

__device__ __forceinline__ void swap_items(Item* a, Item* b) {
  const Item t = *a;
  *a = *b;
  *b = t;
}

__device__ __forceinline__ int floor_log2(int64_t n) {
  return 63 - __clzll(static_cast<long long>(n));
}

// ---- stl_heap.h

template <typename C>
__device__ void push_heap(Item* first, int64_t hole, int64_t top, Item value, C comp) {
  int64_t parent = (hole - 1) / 2;
  while (hole > top && comp(first[parent], value)) {
    first[hole] = first[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  first[hole] = value;
}

template <typename C>
__device__ void adjust_heap(Item* first, int64_t hole, int64_t len, Item value, C comp) {
  const int64_t top = hole;
  int64_t second = hole;
  while (second < (len - 1) / 2) {
    second = 2 * (second + 1);
    if (comp(first[second], first[second - 1])) second--;
    first[hole] = first[second];
    hole = second;
  }
  if ((len & 1) == 0 && second == (len - 2) / 2) {
    second = 2 * (second + 1);
    first[hole] = first[second - 1];
    hole = second - 1;
  }
  push_heap(first, hole, top, value, comp);
}

template <typename C>
__device__ void pop_heap(Item* first, int64_t len, Item* result, C comp) {
  const Item value = *result;
  *result = *first;
  adjust_heap(first, 0, len, value, comp);
}

template <typename C>
__device__ void make_heap(Item* first, int64_t len, C comp) {
  if (len < 2) return;
  for (int64_t parent = (len - 2) / 2;; --parent) {
    adjust_heap(first, parent, len, first[parent], comp);
    if (parent == 0) return;
  }
}

template <typename C>
__device__ void sort_heap(Item* first, int64_t len, C comp) {
  while (len > 1) {
    --len;
    pop_heap(first, len, first + len, comp);
  }
}

template <typename C>
__device__ void heap_select(Item* first, int64_t middle, int64_t last, C comp) {
  make_heap(first, middle, comp);
  for (int64_t i = middle; i < last; ++i) {
    if (comp(first[i], first[0])) pop_heap(first, middle, first + i, comp);
  }
}

// ---- stl_algo.h

template <typename C>
__device__ void move_median_to_first(Item* result, Item* a, Item* b, Item* c, C comp) {
  if (comp(*a, *b)) {
    if (comp(*b, *c)) {
      swap_items(result, b);
    } else if (comp(*a, *c)) {
      swap_items(result, c);
    } else {
      swap_items(result, a);
    }
  } else if (comp(*a, *c)) {
    swap_items(result, a);
  } else if (comp(*b, *c)) {
    swap_items(result, c);
  } else {
    swap_items(result, b);
  }
}

template <typename C>
__device__ Item* unguarded_partition(Item* first, Item* last, const Item* pivot, C comp) {
  Item* const end = last;
  while (true) {
    while (first < end && comp(*first, *pivot)) ++first;
    --last;
    while (last > pivot && comp(*pivot, *last)) --last;
    if (!(first < last)) return first;
    swap_items(first, last);
    ++first;
  }
}

template <typename C>
__device__ Item* unguarded_partition_pivot(Item* first, Item* last, C comp) {
  Item* mid = first + (last - first) / 2;
  move_median_to_first(first, first + 1, mid, last - 1, comp);
  return unguarded_partition(first + 1, last, first, comp);
}

// Inserts *last into the sorted run before it; `begin` bounds the walk (the guard).
template <typename C>
__device__ void unguarded_linear_insert(Item* begin, Item* last, C comp) {
  const Item value = *last;
  while (last != begin && comp(value, *(last - 1))) {
    *last = *(last - 1);
    --last;
  }
  *last = value;
}

template <typename C>
__device__ void insertion_sort(Item* first, Item* last, C comp) {
  if (first == last) return;
  for (Item* i = first + 1; i != last; ++i) {
    if (comp(*i, *first)) {
      const Item value = *i;
      for (Item* p = i; p != first; --p) *p = *(p - 1);
      *first = value;
    } else {
      unguarded_linear_insert(first, i, comp);
    }
  }
}

constexpr int64_t kThreshold = 16;  // libstdc++'s _S_threshold

template <typename C>
__device__ void final_insertion_sort(Item* first, Item* last, C comp) {
  if (last - first > kThreshold) {
    insertion_sort(first, first + kThreshold, comp);
    for (Item* i = first + kThreshold; i != last; ++i) unguarded_linear_insert(first, i, comp);
  } else {
    insertion_sort(first, last, comp);
  }
}

template <typename C>
__device__ void partial_sort(Item* first, int64_t middle, int64_t last, C comp) {
  heap_select(first, middle, last, comp);
  sort_heap(first, middle, comp);
}

// A range introsort has still to sort: the right part of each partition. They are pushed with
// strictly decreasing depths, so depth_limit of them suffice; they live in global memory (a local
// array of that size would make the device reserve it for every thread it can hold).
struct Range {
  Item* first;
  Item* last;
  int depth;
};

template <typename C>
__device__ void introsort_loop(Item* first, Item* last, int depth_limit, Range* pending, C comp) {
  Range r{first, last, depth_limit};
  int count = 0;
  while (true) {
    while (r.last - r.first > kThreshold) {
      if (r.depth == 0) {
        partial_sort(r.first, r.last - r.first, r.last - r.first, comp);
        break;
      }
      --r.depth;
      Item* cut = unguarded_partition_pivot(r.first, r.last, comp);
      pending[count++] = {cut, r.last, r.depth};
      r.last = cut;
    }
    if (count == 0) return;
    r = pending[--count];
  }
}

template <typename C>
__device__ void sort(Item* first, Item* last, Range* pending, C comp) {
  if (first == last) return;
  introsort_loop(first, last, floor_log2(last - first) * 2, pending, comp);
  final_insertion_sort(first, last, comp);
}

template <typename C>
__device__ void nth_element(Item* first, Item* nth, Item* last, C comp) {
  if (first == last || nth == last) return;
  int depth_limit = floor_log2(last - first) * 2;
  while (last - first > 3) {
    if (depth_limit == 0) {
      heap_select(first, nth - first + 1, last - first, comp);
      swap_items(first, nth);
      return;
    }
    --depth_limit;
    Item* cut = unguarded_partition_pivot(first, last, comp);
    if (cut <= nth) {
      first = cut;
    } else {
      last = cut;
    }
  }
  insertion_sort(first, last, comp);
}

// ---- topk.cpp's selection, one thread per row. `scratch` holds k items per row on the
// partial_sort path (elements past the heap are read once and never written back to, so they
// stream from the keys), n items per row on the nth_element path; `pending` `depth` ranges per
// row for the sort after nth_element.
template <bool Largest>
__global__ void topk_kernel(const uint64_t* keys, Item* scratch, Range* pending, int depth,
                            int64_t* indices, int64_t rows, int64_t n, int64_t k, bool sorted) {
  const Before<Largest> comp;
  for (int64_t row = thread_index(); row < rows; row += thread_count()) {
    const uint64_t* key = keys + row * n;
    Item* q;
    if (k * 64 <= n) {
      q = scratch + row * k;
      for (int64_t i = 0; i < k; ++i) q[i] = {key[i], i};
      make_heap(q, k, comp);
      for (int64_t i = k; i < n; ++i) {
        const Item x{key[i], i};
        if (comp(x, q[0])) adjust_heap(q, 0, k, x, comp);  // pop_heap with x at position i
      }
      sort_heap(q, k, comp);
    } else {
      q = scratch + row * n;
      for (int64_t i = 0; i < n; ++i) q[i] = {key[i], i};
      nth_element(q, q + (k - 1), q + n, comp);
      if (sorted) sort(q, q + (k - 1), pending + row * depth, comp);
    }
    for (int64_t j = 0; j < k; ++j) indices[row * k + j] = q[j].index;
  }
}

}  // namespace

void topk_rows(ScalarType type, const void* in, void* values, int64_t* indices, int64_t rows,
               int64_t n, int64_t k, bool largest, bool sorted, Workspace& ws,
               cudaStream_t stream) {
  if (rows == 0 || k == 0) return;
  const auto total = static_cast<size_t>(rows * n);
  auto* keys = static_cast<uint64_t*>(ws.bytes(total * sizeof(uint64_t)));
  to_keys(type, in, keys, rows * n, false, true, stream);
  const int64_t per_row = k * 64 <= n ? k : n;
  auto* scratch = static_cast<Item*>(ws.bytes(static_cast<size_t>(rows * per_row) * sizeof(Item)));
  Range* pending = nullptr;
  int depth = 0;
  if (sorted && per_row == n && k - 1 > kThreshold) {
    depth = 2 * (std::bit_width(static_cast<uint64_t>(k - 1)) - 1);  // sort's depth_limit
    pending = static_cast<Range*>(ws.bytes(static_cast<size_t>(rows * depth) * sizeof(Range)));
  }
  // Serial work per thread: small blocks spread the rows over every multiprocessor.
  constexpr int kRowThreads = 64;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((rows + 63) / kRowThreads, 65536));
  if (largest) {
    topk_kernel<true><<<blocks, kRowThreads, 0, stream>>>(keys, scratch, pending, depth, indices,
                                                          rows, n, k, sorted);
  } else {
    topk_kernel<false><<<blocks, kRowThreads, 0, stream>>>(keys, scratch, pending, depth, indices,
                                                           rows, n, k, sorted);
  }
  KILN_CUDA_CHECK_LAUNCH();
  gather_rows(element_size(type), in, n, indices, k, rows, values, stream);
}

}  // namespace kiln::cuda::kernels
