#include <kiln/core/error.h>
#include <kiln/core/storage.h>

#include <array>

namespace kiln {
namespace {
std::array<std::atomic<Allocator*>, kNumDeviceTypes>& allocators() {
  static std::array<std::atomic<Allocator*>, kNumDeviceTypes> table{};
  static const bool init = [] {
    table[static_cast<size_t>(DeviceType::CPU)].store(&cpu_allocator());
    return true;
  }();
  (void)init;
  return table;
}
}  // namespace

void set_allocator(DeviceType type, Allocator* allocator) {
  allocators()[static_cast<size_t>(type)].store(allocator);
}
Allocator* get_allocator(DeviceType type) { return allocators()[static_cast<size_t>(type)].load(); }

Storage make_storage(size_t nbytes, Device device) {
  if (device.is_meta()) return std::make_shared<StorageImpl>(nbytes, device);
  Allocator* alloc = get_allocator(device.type());
  KILN_CHECK(alloc != nullptr, "no allocator for device {}: kiln was built without support for it",
             device.str());
  return std::make_shared<StorageImpl>(alloc->allocate(nbytes), nbytes);
}

}  // namespace kiln
