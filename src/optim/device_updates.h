#pragma once
// The one-pass optimizer updates on devices other than the CPU: every parameter of a step in one
// launch (torch.optim's foreach/fused paths on a GPU) instead of eight elementwise ops per
// parameter, each a launch of its own. A device layer registers its functions (src/cuda does for
// CUDA); an optimizer collects a step's updates per device in PendingUpdates and runs them at the
// end of the step. The CPU runs adam_kernel.h / sgd_kernel.h per parameter instead.
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

// The registry, filled during static initialization by the device layers.
void set_device_updates(DeviceType type, DeviceUpdates updates);
// Whether `type` has one-pass updates (the CPU always has).
bool has_device_updates(DeviceType type);

// A step's updates of parameters on non-CPU devices, run by run() per device.
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
