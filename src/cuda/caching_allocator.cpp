// The CUDA caching allocator (PyTorch's CUDACachingAllocator, simplified): cudaMalloc and cudaFree
// synchronize the device and cost microseconds, so freed blocks are kept and handed out again.
// A free block is reused only by allocations on the stream it was allocated on: work queued on
// that stream may still read it, and stream order makes the reuse safe without an event. Blocks
// are not split or merged; sizes are rounded (caching_allocator.h) so that sizes repeating across
// steps of a training loop find their blocks again. CUDA graphs get private pools of blocks
// (caching_allocator.h).
#include "cuda/caching_allocator.h"

#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/core/storage.h>
#include <kiln/cuda/cuda.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::cuda {
namespace {

// Pool 0 is the shared cache; a CUDA graph's pool has its own number.
struct Block {
  size_t size = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
  uint64_t pool = 0;
};

class CachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    check_available("CUDA allocator");
    const int device = current_device();
    cudaStream_t stream = stream_of(device);
    if (nbytes == 0) return DataPtr(nullptr, 0, Device::cuda(device), nullptr, nullptr);
    const size_t size = rounded_size(nbytes);
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t pool = 0;
    if (!capturing_.empty()) {  // no lookup per allocation when nothing is captured
      if (auto c = capturing_.find(stream); c != capturing_.end()) {
        pool = c->second.pool;
        stream = c->second.origin;
      }
    }
    auto [ptr, block_size] = take_cached(pool, device, stream, size);
    if (ptr == nullptr) {
      ptr = malloc_device(device, size, nbytes);
      block_size = size;
      if (pool != 0) pools_[pool].emplace(static_cast<char*>(ptr), block_size);
    }
    active_[ptr] = Block{block_size, device, stream, pool};
    Stats& s = stats(device);
    s.allocated += block_size;
    s.peak_allocated = std::max(s.peak_allocated, s.allocated);
    return DataPtr(ptr, nbytes, Device::cuda(device), &CachingAllocator::release, this);
  }

  size_t allocated(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats(device).allocated;
  }
  size_t reserved(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats(device).reserved;
  }
  size_t peak_allocated(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats(device).peak_allocated;
  }
  void reset_peak(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats(device).peak_allocated = stats(device).allocated;
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_cached(-1);
  }

  uint64_t create_pool() {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t pool = ++last_pool_;
    pools_[pool];
    return pool;
  }
  void begin_capture(uint64_t pool, cudaStream_t captured, cudaStream_t origin) {
    std::lock_guard<std::mutex> lock(mutex_);
    capturing_[captured] = Capture{pool, origin};
  }
  void end_capture(cudaStream_t captured) {
    std::lock_guard<std::mutex> lock(mutex_);
    capturing_.erase(captured);
  }
  void release_pool(uint64_t pool) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pools_.erase(pool) == 0) return;
    for (auto it = free_.begin(); it != free_.end();) {
      const auto& [p, device, stream, size] = it->first;
      if (p != pool) {
        ++it;
        continue;
      }
      free_.emplace(PoolKey{0, device, stream, size}, it->second);
      it = free_.erase(it);
    }
  }
  // Whether `ptr` lies in a block of `pool` (0: of any live pool).
  bool pool_owns(uint64_t pool, const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* at = static_cast<const char*>(ptr);
    const auto in = [at](const std::map<char*, size_t>& blocks) {
      auto it = blocks.upper_bound(const_cast<char*>(at));
      if (it == blocks.begin()) return false;
      --it;
      return at < it->first + it->second;
    };
    if (pool == 0) {
      return std::any_of(pools_.begin(), pools_.end(), [&](const auto& p) { return in(p.second); });
    }
    auto p = pools_.find(pool);
    return p != pools_.end() && in(p->second);
  }

 private:
  struct Stats {
    size_t allocated = 0;       // in blocks held by tensors
    size_t reserved = 0;        // allocated plus cached
    size_t peak_allocated = 0;  // the most `allocated` reached since the last reset
  };
  // Free blocks by (pool, device, stream, size): a lower_bound finds the smallest that fits.
  using PoolKey = std::tuple<uint64_t, int, cudaStream_t, size_t>;
  struct Capture {
    uint64_t pool = 0;
    cudaStream_t origin = nullptr;
  };

  Stats& stats(int device) {
    if (static_cast<size_t>(device) >= stats_.size())
      stats_.resize(static_cast<size_t>(device) + 1);
    return stats_[static_cast<size_t>(device)];
  }

  // A cached block of at least `size` bytes for the stream, and its size; {nullptr, 0} if none.
  std::pair<void*, size_t> take_cached(uint64_t pool, int device, cudaStream_t stream,
                                       size_t size) {
    auto it = free_.lower_bound(PoolKey{pool, device, stream, size});
    if (it == free_.end() || std::get<0>(it->first) != pool || std::get<1>(it->first) != device ||
        std::get<2>(it->first) != stream)
      return {nullptr, 0};
    const size_t found = std::get<3>(it->first);
    // Small sizes match exactly; a large request may take a block up to twice its size, beyond
    // which a fresh block wastes less than the cached one would.
    if (found != size && (size <= kSmallLimit || found > 2 * size)) return {nullptr, 0};
    void* ptr = it->second;
    free_.erase(it);
    return {ptr, found};
  }

  void* malloc_device(int device, size_t size, size_t requested) {
    DeviceGuard guard(device);
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, size);
    if (status == cudaErrorMemoryAllocation) {
      // Give the cached blocks back and try once more before reporting.
      (void)cudaGetLastError();
      release_cached(device);
      status = cudaMalloc(&ptr, size);
    }
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      size_t free_bytes = 0, total = 0;
      (void)cudaMemGetInfo(&free_bytes, &total);
      (void)cudaGetLastError();
      throw_error(fmt::format(
          "CUDA out of memory: tried to allocate {} bytes ({} rounded) on cuda:{}: {}; kiln holds "
          "{} bytes in tensors and {} bytes reserved; the device has {} of {} bytes free",
          requested, size, device, cudaGetErrorString(status), stats(device).allocated,
          stats(device).reserved, free_bytes, total));
    }
    stats(device).reserved += size;
    return ptr;
  }

  // Frees the shared cache's blocks of `device` (-1: every device); graphs keep their pools'.
  // Holds mutex_.
  void release_cached(int device) {
    for (auto it = free_.begin(); it != free_.end();) {
      const auto& [pool, d, stream, size] = it->first;
      if (pool != 0 || (device >= 0 && d != device)) {
        ++it;
        continue;
      }
      DeviceGuard guard(d);
      KILN_CUDA_CHECK(cudaFree(it->second));
      stats(d).reserved -= size;
      it = free_.erase(it);
    }
  }

  static void release(void* ctx, void* ptr, size_t /*nbytes*/) {
    // No CUDA call here: a tensor may be freed from any thread, during exit too.
    auto* self = static_cast<CachingAllocator*>(ctx);
    std::lock_guard<std::mutex> lock(self->mutex_);
    auto it = self->active_.find(ptr);
    if (it == self->active_.end()) return;
    const Block b = it->second;
    self->active_.erase(it);
    self->stats(b.device).allocated -= b.size;
    // A released pool's blocks join the shared cache.
    const uint64_t pool = b.pool != 0 && self->pools_.count(b.pool) != 0 ? b.pool : 0;
    self->free_.emplace(PoolKey{pool, b.device, b.stream, b.size}, ptr);
  }

  std::mutex mutex_;
  std::unordered_map<void*, Block> active_;
  std::multimap<PoolKey, void*> free_;
  std::vector<Stats> stats_;
  uint64_t last_pool_ = 0;
  std::unordered_map<uint64_t, std::map<char*, size_t>> pools_;  // live pools: their blocks
  std::unordered_map<cudaStream_t, Capture> capturing_;
};

// Leaked on purpose: tensors in static objects may be freed after main returns.
CachingAllocator& caching_allocator() {
  static auto* a = new CachingAllocator();
  return *a;
}

[[maybe_unused]] const bool registered = [] {
  set_allocator(DeviceType::CUDA, &caching_allocator());
  return true;
}();

}  // namespace

size_t memory_allocated(int device) {
  return caching_allocator().allocated(device < 0 ? current_device() : device);
}
size_t memory_reserved(int device) {
  return caching_allocator().reserved(device < 0 ? current_device() : device);
}
size_t max_memory_allocated(int device) {
  return caching_allocator().peak_allocated(device < 0 ? current_device() : device);
}
void reset_peak_memory_stats(int device) {
  caching_allocator().reset_peak(device < 0 ? current_device() : device);
}
void empty_cache() {
  check_available("cuda::empty_cache");
  caching_allocator().empty_cache();
}

uint64_t create_graph_pool() { return caching_allocator().create_pool(); }
void begin_pool_allocations(uint64_t pool, CUstream_st* captured, CUstream_st* origin) {
  caching_allocator().begin_capture(pool, captured, origin);
}
void end_pool_allocations(CUstream_st* captured) { caching_allocator().end_capture(captured); }
void release_graph_pool(uint64_t pool) { caching_allocator().release_pool(pool); }
bool graph_pool_owns(uint64_t pool, const void* ptr) {
  return caching_allocator().pool_owns(pool, ptr);
}

}  // namespace kiln::cuda
