// Autocast's guards and thread state (kiln/amp/autocast.h); the casts themselves are
// autocast_policy.cpp's, reached through the dispatcher's autocast hook.
#include "amp/autocast_state.h"

#include <kiln/amp/autocast.h>
#include <kiln/core/error.h>
#include <kiln/ops/registry.h>

#include <array>

namespace kiln {
namespace {

struct DeviceState {
  bool enabled = false;
  DType dtype;
};

// CPU and CUDA; defaults as PyTorch's.
thread_local std::array<DeviceState, 2> tls_state = {DeviceState{false, DType::BFloat16},
                                                     DeviceState{false, DType::Float16}};

size_t slot(DeviceType device) {
  KILN_CHECK(device == DeviceType::CPU || device == DeviceType::CUDA,
             "autocast: expected device type cpu or cuda");
  return device == DeviceType::CPU ? 0 : 1;
}

bool any_enabled() { return tls_state[0].enabled || tls_state[1].enabled; }

}  // namespace

autocast::autocast(Device device, std::optional<DType> dtype, bool enabled)
    : device_(device.type()) {
  KILN_CHECK(device.is_cpu() || device.is_cuda(), "autocast: expected device cpu or cuda, got {}",
             device.str());
  DeviceState& s = tls_state[slot(device_)];
  const DType want = dtype.value_or(device.is_cuda() ? DType::Float16 : DType::BFloat16);
  KILN_CHECK(want == DType::Float16 || want == DType::BFloat16,
             "autocast: expected dtype float16 or bfloat16 on {}, got {}", device.str(),
             dtype_name(want));
  previous_enabled_ = s.enabled;
  previous_dtype_ = s.dtype;
  s.enabled = enabled;
  s.dtype = want;
  ops::set_autocast_active(any_enabled());
}

autocast::~autocast() {
  DeviceState& s = tls_state[slot(device_)];
  s.enabled = previous_enabled_;
  s.dtype = previous_dtype_;
  ops::set_autocast_active(any_enabled());
}

bool is_autocast_enabled(DeviceType device) { return tls_state[slot(device)].enabled; }

DType get_autocast_dtype(DeviceType device) { return tls_state[slot(device)].dtype; }

namespace amp {

uint32_t autocast_state_key() {
  uint32_t key = 0;
  for (size_t i = 0; i < tls_state.size(); ++i) {
    if (!tls_state[i].enabled) continue;
    key |= (1u | static_cast<uint32_t>(tls_state[i].dtype) << 1) << (8 * i);
  }
  return key;
}

std::string describe_autocast_state(uint32_t key) {
  if (key == 0) return "autocast off";
  std::string text = "autocast";
  const char* names[] = {"cpu", "cuda"};
  for (size_t i = 0; i < 2; ++i) {
    const uint32_t part = (key >> (8 * i)) & 0xffu;
    if ((part & 1u) == 0) continue;
    text +=
        std::string(" ") + names[i] + " " + std::string(dtype_name(static_cast<DType>(part >> 1)));
  }
  return text;
}

AutocastPause::AutocastPause() : was_active_(ops::autocast_active()) {
  ops::set_autocast_active(false);
}
AutocastPause::~AutocastPause() { ops::set_autocast_active(was_active_); }

}  // namespace amp
}  // namespace kiln
