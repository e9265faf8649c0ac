#pragma once
// Storage: the reference-counted memory that tensors view. Views of one tensor share one
// StorageImpl, and so its version counter, which autograd reads to detect in-place changes to
// saved tensors.
#include <kiln/core/allocator.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace kiln {

class StorageImpl {
 public:
  StorageImpl(DataPtr data, size_t nbytes) : data_(std::move(data)), nbytes_(nbytes) {}
  // Metadata-only storage (the meta device): a size, no memory.
  StorageImpl(size_t nbytes, Device device)
      : data_(nullptr, 0, device, nullptr, nullptr), nbytes_(nbytes) {}

  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }

  // Exchanges the memory of two storages of the same size: a CUDA graph's output still held
  // when the graph replays moves to memory of its own, the graph keeps its address.
  void swap_data(StorageImpl& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(nbytes_, other.nbytes_);
  }

  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  std::atomic<uint32_t> version_{0};
};

using Storage = std::shared_ptr<StorageImpl>;

// Allocates nbytes on device (CPU: the caching allocator; meta: no memory).
Storage make_storage(size_t nbytes, Device device);

// Registers the allocator used for a device type (the CUDA layer registers its own).
void set_allocator(DeviceType type, Allocator* allocator);
Allocator* get_allocator(DeviceType type);

}  // namespace kiln
