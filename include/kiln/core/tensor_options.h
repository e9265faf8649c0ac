#pragma once
// TensorOptions: dtype, device and requires_grad for factory functions, convertible from a DType
// or a Device as in libtorch (`kiln::zeros({2, 3}, kiln::kFloat64)`).
#include <kiln/core/device.h>
#include <kiln/core/dtype.h>

#include <optional>

namespace kiln {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d) {}                // NOLINT: implicit, as in libtorch
  TensorOptions(Device d) : device_(d) {}              // NOLINT
  TensorOptions(DeviceType t) : device_(Device(t)) {}  // NOLINT

  TensorOptions dtype(DType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions dtype(std::optional<DType> d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }

  std::optional<DType> dtype_opt() const { return dtype_; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  DType dtype() const { return dtype_.value_or(default_float_dtype()); }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<DType> dtype_;
  Device device_ = Device::cpu();
  bool requires_grad_ = false;
};

inline TensorOptions dtype(DType d) { return TensorOptions(d); }
inline TensorOptions device(Device d) { return TensorOptions(d); }

}  // namespace kiln
