#include <kiln/core/allocator.h>
#include <kiln/core/error.h>

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace kiln {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kMinBlock = 64;
constexpr size_t kHugePageThreshold = size_t{2} << 20;

// Size classes: four steps per power of two above 256 bytes, so rounding wastes at most 25%.
size_t size_class(size_t nbytes) {
  if (nbytes <= kMinBlock) return kMinBlock;
  if (nbytes <= 256) return (nbytes + kMinBlock - 1) / kMinBlock * kMinBlock;
  size_t top = std::bit_floor(nbytes - 1);  // highest power of two below nbytes
  size_t step = top / 4;
  return (nbytes + step - 1) / step * step;
}

class CachingCpuAllocator final : public Allocator {
 public:
  ~CachingCpuAllocator() override { empty_cache(); }

  DataPtr allocate(size_t nbytes) override {
    size_t cls = size_class(nbytes);
    void* ptr = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        ptr = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= cls;
        ++stats_.cache_hits;
      }
      stats_.allocated_bytes += cls;
      stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    }
    if (!ptr) {
      ptr = std::aligned_alloc(kAlignment, cls);
      if (!ptr) {
        // Give the cache back and try once more before reporting.
        empty_cache();
        ptr = std::aligned_alloc(kAlignment, cls);
      }
      if (!ptr) {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.allocated_bytes -= cls;
        KILN_FAIL("cpu allocator: out of memory allocating {} bytes", nbytes);
      }
      if (cls >= kHugePageThreshold) madvise(ptr, cls, MADV_HUGEPAGE);
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.system_allocations;
    }
    return DataPtr(ptr, cls, Device::cpu(), &CachingCpuAllocator::release, this);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [cls, blocks] : free_) {
      for (void* p : blocks) std::free(p);
    }
    free_.clear();
    stats_.cached_bytes = 0;
  }

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

 private:
  static void release(void* ctx, void* ptr, size_t cls) {
    auto* self = static_cast<CachingCpuAllocator*>(ctx);
    std::lock_guard<std::mutex> lock(self->mu_);
    self->free_[cls].push_back(ptr);
    self->stats_.cached_bytes += cls;
    self->stats_.allocated_bytes -= cls;
  }

  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
};

// Leaked on purpose: tensors in static objects may be freed after main returns.
CachingCpuAllocator& instance() {
  static auto* a = new CachingCpuAllocator();
  return *a;
}

}  // namespace

Allocator& cpu_allocator() { return instance(); }
AllocatorStats cpu_allocator_stats() { return instance().stats(); }
void reset_cpu_allocator_peak() { instance().reset_peak(); }
void cpu_allocator_empty_cache() { instance().empty_cache(); }

}  // namespace kiln
