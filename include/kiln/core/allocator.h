#pragma once
// Memory behind tensors. An Allocator hands out DataPtrs that know how to free themselves, so a
// Storage can hold memory from any allocator (kiln's CPU cache, a CUDA caching allocator, or a
// caller's buffer) behind one type.
#include <kiln/core/device.h>

#include <cstddef>
#include <memory>

namespace kiln {

// Owning pointer to device memory with a type-erased deleter.
class DataPtr {
 public:
  using Deleter = void (*)(void* ctx, void* ptr, size_t nbytes);
  DataPtr() = default;
  DataPtr(void* ptr, size_t nbytes, Device device, Deleter deleter, void* ctx)
      : ptr_(ptr), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { swap(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    DataPtr tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~DataPtr() {
    if (deleter_) deleter_(ctx_, ptr_, nbytes_);
  }

  void* get() const { return ptr_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void swap(DataPtr& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(nbytes_, o.nbytes_);
    std::swap(device_, o.device_);
    std::swap(deleter_, o.deleter_);
    std::swap(ctx_, o.ctx_);
  }
  void* ptr_ = nullptr;
  size_t nbytes_ = 0;
  Device device_ = Device::cpu();
  Deleter deleter_ = nullptr;
  void* ctx_ = nullptr;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
};

// Statistics of the CPU allocator's cache, for tests and benchmarks (peak memory).
struct AllocatorStats {
  size_t allocated_bytes = 0;       // handed out and not yet freed (requested sizes rounded)
  size_t peak_allocated_bytes = 0;  // high-water mark of allocated_bytes since the last reset
  size_t cached_bytes = 0;          // freed blocks kept for reuse
  size_t system_allocations = 0;    // blocks obtained from the operating system
  size_t cache_hits = 0;            // allocations served from the cache
};

// The CPU allocator: 64-byte aligned blocks, freed blocks kept per size class and reused, because
// touching a fresh page costs far more than the arithmetic on it (see ANCHORS.md).
Allocator& cpu_allocator();
AllocatorStats cpu_allocator_stats();
void reset_cpu_allocator_peak();
// Returns every cached block to the operating system.
void cpu_allocator_empty_cache();

}  // namespace kiln
