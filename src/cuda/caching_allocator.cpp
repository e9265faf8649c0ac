// The CUDA caching allocator (PyTorch's CUDACachingAllocator, simplified): cudaMalloc and cudaFree
// synchronize the device and cost microseconds, so freed blocks are kept and handed out again.
// A free block is reused only by allocations on the stream it was allocated on: work queued on
// that stream may still read it, and stream order makes the reuse safe without an event. Blocks
// are not split or merged; sizes are rounded (caching_allocator.h) so that sizes repeating across
// steps of a training loop find their blocks again.
#include "cuda/caching_allocator.h"

#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/core/storage.h>
#include <kiln/cuda/cuda.h>

#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::cuda {
namespace {

struct Block {
  size_t size = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
};

class CachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    check_available("CUDA allocator");
    const int device = current_device();
    const cudaStream_t stream = stream_of(device);
    if (nbytes == 0) return DataPtr(nullptr, 0, Device::cuda(device), nullptr, nullptr);
    const size_t size = rounded_size(nbytes);
    std::lock_guard<std::mutex> lock(mutex_);
    auto [ptr, block_size] = take_cached(device, stream, size);
    if (ptr == nullptr) {
      ptr = malloc_device(device, size, nbytes);
      block_size = size;
    }
    active_[ptr] = Block{block_size, device, stream};
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

 private:
  struct Stats {
    size_t allocated = 0;       // in blocks held by tensors
    size_t reserved = 0;        // allocated plus cached
    size_t peak_allocated = 0;  // the most `allocated` reached since the last reset
  };
  // Free blocks by (device, stream, size): a lower_bound finds the smallest that fits.
  using PoolKey = std::tuple<int, cudaStream_t, size_t>;

  Stats& stats(int device) {
    if (static_cast<size_t>(device) >= stats_.size())
      stats_.resize(static_cast<size_t>(device) + 1);
    return stats_[static_cast<size_t>(device)];
  }

  // A cached block of at least `size` bytes for the stream, and its size; {nullptr, 0} if none.
  std::pair<void*, size_t> take_cached(int device, cudaStream_t stream, size_t size) {
    auto it = free_.lower_bound(PoolKey{device, stream, size});
    if (it == free_.end() || std::get<0>(it->first) != device || std::get<1>(it->first) != stream)
      return {nullptr, 0};
    const size_t found = std::get<2>(it->first);
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

  // Frees cached blocks of `device` (-1: every device). Holds mutex_.
  void release_cached(int device) {
    for (auto it = free_.begin(); it != free_.end();) {
      const auto& [d, stream, size] = it->first;
      if (device >= 0 && d != device) {
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
    self->free_.emplace(PoolKey{b.device, b.stream, b.size}, ptr);
  }

  std::mutex mutex_;
  std::unordered_map<void*, Block> active_;
  std::multimap<PoolKey, void*> free_;
  std::vector<Stats> stats_;
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

}  // namespace kiln::cuda
