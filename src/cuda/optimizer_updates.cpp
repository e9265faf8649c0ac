// The CUDA layer's one-pass optimizer updates (optim/device_updates.h): a step's parameters on a
// device in a few multi-tensor launches (kernels/optimizer.cu) on its current stream.
#include "cuda/device_state.h"
#include "cuda/kernels/optimizer.h"
#include "optim/device_updates.h"

#include <kiln/cuda/cuda.h>

namespace kiln::cuda {
namespace {

void adam(Device device, std::span<const optim::detail::AdamUpdateArgs> updates) {
  DeviceGuard guard(device.index());
  kernels::adam_updates(updates.data(), static_cast<int64_t>(updates.size()),
                        stream_of(device.index()));
}

void sgd(Device device, std::span<const optim::detail::SGDUpdateArgs> updates) {
  DeviceGuard guard(device.index());
  kernels::sgd_updates(updates.data(), static_cast<int64_t>(updates.size()),
                       stream_of(device.index()));
}

[[maybe_unused]] const bool registered = [] {
  optim::detail::set_device_updates(DeviceType::CUDA, {.adam = &adam, .sgd = &sgd});
  return true;
}();

}  // namespace
}  // namespace kiln::cuda
