#include <kiln/core/device.h>
#include <kiln/core/error.h>

#include <charconv>

namespace kiln {

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(-1) {
  std::string_view kind = spec.substr(0, spec.find(':'));
  if (kind == "cpu") {
    type_ = DeviceType::CPU;
  } else if (kind == "cuda") {
    type_ = DeviceType::CUDA;
  } else if (kind == "meta") {
    type_ = DeviceType::Meta;
  } else {
    KILN_FAIL("Device: expected one of cpu, cuda, meta (optionally with ':index'), got '{}'", spec);
  }
  if (kind.size() < spec.size()) {
    std::string_view idx = spec.substr(kind.size() + 1);
    int value = -1;
    auto [ptr, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), value);
    KILN_CHECK(ec == std::errc() && ptr == idx.data() + idx.size() && value >= 0 && value < 128,
               "Device: invalid device index in '{}', expected a number from 0 to 127", spec);
    index_ = static_cast<int8_t>(value);
  }
}

std::string Device::str() const {
  std::string s = type_ == DeviceType::CPU ? "cpu" : type_ == DeviceType::CUDA ? "cuda" : "meta";
  if (index_ >= 0) s += fmt::format(":{}", index_);
  return s;
}

}  // namespace kiln
