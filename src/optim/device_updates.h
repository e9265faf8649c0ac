#pragma once
// The one-pass optimizer updates per device: an optimizer collects a step's updates per device in
// PendingUpdates and runs them at the end of the step, each device's in one call. The CPU's run
// adam_kernel.h / sgd_kernel.h per parameter (registered in device_updates.cpp); a device layer
// registers its own (src/cuda: every parameter in a few launches, as torch.optim's foreach path,
// instead of eight elementwise ops per parameter, each a launch of its own).
#include "optim/update_args.h"

#include <kiln/core/device.h>

#include <span>
#include <utility>
#include <vector>

namespace kiln::optim::detail {

struct DeviceUpdates {
  // Run the updates (argument structs on the host, tensors on `device`) on the device's current
  // stream, in any order: each updates a parameter of its own.
  void (*adam)(Device device, std::span<const AdamUpdateArgs> updates) = nullptr;
  void (*sgd)(Device device, std::span<const SGDUpdateArgs> updates) = nullptr;
};

// The registry, filled during static initialization (the CPU's here, others by their layers).
void set_device_updates(DeviceType type, DeviceUpdates updates);
// Whether `type` has one-pass updates.
bool has_device_updates(DeviceType type);

// A step's updates, run by run() per device.
class PendingUpdates {
 public:
  void add(Device device, const AdamUpdateArgs& a) { group(adam_, device).push_back(a); }
  void add(Device device, const SGDUpdateArgs& a) { group(sgd_, device).push_back(a); }
  void run();

 private:
  template <class Args>
  static std::vector<Args>& group(std::vector<std::pair<Device, std::vector<Args>>>& groups,
                                  Device device) {
    for (auto& [d, list] : groups) {
      if (d == device) return list;
    }
    return groups.emplace_back(device, std::vector<Args>{}).second;
  }

  std::vector<std::pair<Device, std::vector<AdamUpdateArgs>>> adam_;
  std::vector<std::pair<Device, std::vector<SGDUpdateArgs>>> sgd_;
};

}  // namespace kiln::optim::detail
