#include "optim/device_updates.h"

#include "optim/adam_kernel.h"
#include "optim/sgd_kernel.h"

#include <array>

namespace kiln::optim::detail {
namespace {

std::array<DeviceUpdates, kNumDeviceTypes>& registry() {
  static std::array<DeviceUpdates, kNumDeviceTypes> updates{};
  return updates;
}

// The CPU's: each parameter through its one-pass kernel (parallel over its elements).
void cpu_adam(Device, std::span<const AdamUpdateArgs> updates) {
  for (const AdamUpdateArgs& a : updates) {
    if (a.n > 0) adam_update_kernels(a);
  }
}
void cpu_sgd(Device, std::span<const SGDUpdateArgs> updates) {
  for (const SGDUpdateArgs& a : updates) {
    if (a.n > 0) sgd_update_kernels(a);
  }
}

[[maybe_unused]] const bool cpu_registered = [] {
  set_device_updates(DeviceType::CPU, {.adam = &cpu_adam, .sgd = &cpu_sgd});
  return true;
}();

const DeviceUpdates& updates_of(DeviceType type) {
  return registry().at(static_cast<size_t>(type));
}

}  // namespace

void set_device_updates(DeviceType type, DeviceUpdates updates) {
  registry().at(static_cast<size_t>(type)) = updates;
}

bool has_device_updates(DeviceType type) {
  const DeviceUpdates& u = updates_of(type);
  return u.adam != nullptr && u.sgd != nullptr;
}

void PendingUpdates::run() {
  // Taken out first: a failing launch leaves nothing to run twice.
  auto adam = std::move(adam_);
  auto sgd = std::move(sgd_);
  adam_.clear();
  sgd_.clear();
  for (const auto& [device, list] : adam) updates_of(device.type()).adam(device, list);
  for (const auto& [device, list] : sgd) updates_of(device.type()).sgd(device, list);
}

}  // namespace kiln::optim::detail
