#pragma once
// Automatic mixed precision (PyTorch's torch.autocast): while a guard is alive on a thread, ops on
// tensors of its device run in the precision PyTorch's autocast chooses for them —
//   * matrix products and convolutions (mm, bmm, addmm, baddbmm, matmul, linear, conv*,
//     scaled_dot_product_attention) in the guard's 16-bit dtype;
//   * ops that need range or precision (exp, log, pow, softmax, log_softmax, layer/group/rms norm,
//     sums and products, cumsum, the losses, ...) in float32;
//   * ops that combine several tensors (addcmul, addcdiv, atan2, dot, cat, stack, index_put,
//     scatter_add) in the widest floating type of their tensors;
//   * every other op as its inputs are.
// Only floating tensors on the guard's device are cast, never float64 ones (as PyTorch). The casts
// are ops themselves, so autograd differentiates through them (gradients reach float32
// parameters in float32) and capture records them (a compiled function guards on the autocast
// state it was traced under).
//
//   {
//     kiln::autocast amp(kiln::Device::cuda(), kiln::DType::BFloat16);
//     Tensor loss = criterion(model->forward(x), y);  // linear layers in bfloat16
//   }
//   loss.backward();
#include <kiln/core/device.h>
#include <kiln/core/dtype.h>

#include <optional>

namespace kiln {

class autocast {
 public:
  // `dtype` unset: float16 on CUDA, bfloat16 on the CPU (PyTorch's defaults). Raises kiln::Error
  // for a device other than cpu/cuda or a dtype other than float16/bfloat16 (float32 on the CPU
  // is refused too, as PyTorch's CPU autocast supports only bfloat16 and float16).
  explicit autocast(Device device, std::optional<DType> dtype = std::nullopt, bool enabled = true);
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  DeviceType device_;
  bool previous_enabled_;
  DType previous_dtype_;
};

bool is_autocast_enabled(DeviceType device);
// The dtype autocast casts to on `device` (its default when no guard set one).
DType get_autocast_dtype(DeviceType device);

}  // namespace kiln
