#pragma once
// Where a tensor's memory lives. CUDA devices fit in without changes to the Tensor API; the
// meta device holds metadata only (sizes, strides, dtype) and is what meta functions and
// tracing compute on.
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

enum class DeviceType : uint8_t { CPU, CUDA, Meta };
inline constexpr int kNumDeviceTypes = 3;

class Device {
 public:
  constexpr Device(DeviceType type = DeviceType::CPU, int8_t index = -1)  // NOLINT: implicit
      : type_(type), index_(index) {}
  // Parses "cpu", "cuda", "cuda:1", "meta"; raises kiln::Error otherwise.
  explicit Device(std::string_view spec);

  static constexpr Device cpu() { return Device(DeviceType::CPU); }
  static constexpr Device cuda(int index = 0) {
    return Device(DeviceType::CUDA, static_cast<int8_t>(index));
  }
  static constexpr Device meta() { return Device(DeviceType::Meta); }

  constexpr DeviceType type() const { return type_; }
  constexpr int index() const { return index_; }
  constexpr bool has_index() const { return index_ >= 0; }
  constexpr bool is_cpu() const { return type_ == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type_ == DeviceType::CUDA; }
  constexpr bool is_meta() const { return type_ == DeviceType::Meta; }

  constexpr bool operator==(const Device&) const = default;
  std::string str() const;

 private:
  DeviceType type_;
  int8_t index_;
};

inline constexpr Device kCPU = Device::cpu();
inline constexpr Device kMeta = Device::meta();

}  // namespace kiln
