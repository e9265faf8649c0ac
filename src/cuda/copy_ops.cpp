// The CUDA slots of the ops that move values: copy_ (every direction: host to device, device to
// host, on one device and between devices), _to_copy, fill_, and the factories empty,
// empty_strided and full (whose outputs the dispatcher allocates through the caching allocator).
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include "ops/iterator/tensor_iterator.h"  // broadcast_shapes

#include <cstring>

namespace kiln::cuda {
namespace {

using ops::Stack;

void check_copy_sizes(const Tensor& self, const Tensor& src) {
  KILN_CHECK(ops::broadcast_shapes(self.sizes(), src.sizes(), "copy_") == DimVector(self.sizes()),
             "copy_: source of shape [{}] cannot be broadcast to [{}]",
             fmt::join(src.sizes(), ", "), fmt::join(self.sizes(), ", "));
}

// Host to device: the source is made contiguous on the CPU, its bytes go over as they are, and
// a dtype change, broadcast or strided destination is done by the copy kernel on the device.
void host_to_device(const Tensor& dst, const Tensor& src) {
  DeviceGuard guard(dst.device().index());
  const cudaStream_t stream = stream_of(dst.device().index());
  const Tensor s = src.contiguous();
  const bool direct = dst.is_contiguous() && dst.dtype() == s.dtype() && dst.sizes() == s.sizes();
  const Tensor staging =
      direct ? dst : empty(s.sizes(), TensorOptions(s.dtype()).device(dst.device()));
  KILN_CUDA_CHECK(cudaMemcpyAsync(staging.data_ptr(), s.data_ptr(), s.nbytes(),
                                  cudaMemcpyHostToDevice, stream));
  if (!direct) device_copy(dst, staging);
  // As PyTorch's blocking copy: the host buffer may be freed or changed once copy_ returns.
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Device to host: converted to the destination's dtype and made contiguous on the device, then
// its bytes come over; a broadcast or strided destination is written by the CPU's copy_.
void device_to_host(const Tensor& dst, const Tensor& src) {
  const int device = src.device().index();
  DeviceGuard guard(device);
  const cudaStream_t stream = stream_of(device);
  Tensor s = src;
  if (s.dtype() != dst.dtype() || !s.is_contiguous()) {
    s = empty(src.sizes(), TensorOptions(dst.dtype()).device(src.device()));
    device_copy(s, src);
  }
  const bool direct = dst.is_contiguous() && dst.sizes() == s.sizes();
  Tensor host = direct ? dst : empty(s.sizes(), TensorOptions(dst.dtype()));
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(host.data_ptr(), s.data_ptr(), s.nbytes(), cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!direct) {
    Tensor d = dst;
    d.copy_(host);
  }
}

// Between two devices: the source is made contiguous on its own device and its bytes are copied
// peer to peer into a buffer on the destination's, where the copy kernel finishes.
void device_to_device(const Tensor& dst, const Tensor& src) {
  const int from = src.device().index(), to = dst.device().index();
  Tensor s = src;
  {
    DeviceGuard guard(from);
    s = src.contiguous();
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_of(from)));
  }
  DeviceGuard guard(to);
  Tensor staging = empty(s.sizes(), TensorOptions(s.dtype()).device(dst.device()));
  KILN_CUDA_CHECK(
      cudaMemcpyPeerAsync(staging.data_ptr(), to, s.data_ptr(), from, s.nbytes(), stream_of(to)));
  device_copy(dst, staging);
}

std::vector<Tensor> copy_cuda(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& src = args[1].to_tensor();
  check_copy_sizes(self, src);
  KILN_CHECK(!self.device().is_meta() && !src.device().is_meta(),
             "copy_: cannot copy between {} and {}", src.device().str(), self.device().str());
  if (self.numel() > 0 && !self.is_same(src)) {
    if (self.is_cuda() && src.is_cuda()) {
      if (self.device() == src.device()) {
        DeviceGuard guard(self.device().index());
        device_copy(self, src);
      } else {
        device_to_device(self, src);
      }
    } else if (self.is_cuda()) {
      host_to_device(self, src);
    } else {
      device_to_host(self, src);
    }
  }
  self.impl()->bump_version();
  return {self};
}

// The fill value as the bytes of one element of dtype (kiln's Half/BFloat16 hold the same bits
// as CUDA's __half/__nv_bfloat16).
uint64_t value_bits(const Scalar& value, DType dtype) {
  uint64_t bits = 0;
  KILN_DISPATCH_ALL(dtype, "fill_", [&]<typename T>() {
    const T v = value.to<T>();
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

void fill_device(const Tensor& t, const Scalar& value) {
  if (t.numel() == 0) return;
  DeviceGuard guard(t.device().index());
  LaunchArgs a = launch_args(t, {}, "fill_");
  kernels::fill(a.geometry, a.operands[0], value_bits(value, t.dtype()),
                static_cast<int>(t.itemsize()), stream_of(t.device().index()));
}

}  // namespace

// A factory's device argument against where the allocator put the output. The Allocator
// interface takes no device, so CUDA memory comes from the current device: an index that no device
// has raises, and one that is not current asks for a DeviceGuard rather than silently landing on
// another device.
void check_factory_device(const ops::IValue& arg, const Tensor& out, const char* op) {
  if (arg.is_none()) return;
  const Device requested = arg.to_device();
  if (!requested.has_index()) return;
  const int index = device_index(requested);  // raises when out of range
  KILN_CHECK(out.device().index() == index,
             "{}: CUDA tensors are allocated on the current device (cuda:{}); make {} current "
             "(kiln::cuda::DeviceGuard) to create tensors there",
             op, out.device().index(), requested.str());
}

KILN_CUDA_REGISTER(copy_ops) {
  custom("copy_", copy_cuda);
  custom("fill_", [](const Stack& args) -> std::vector<Tensor> {
    const Tensor& self = args[0].to_tensor();
    fill_device(self, args[1].to_scalar());
    self.impl()->bump_version();
    return {self};
  });
  structured("_to_copy", [](const Stack& args, const std::vector<Tensor>& out) {
    const Tensor& src = args[0].to_tensor();
    DeviceGuard guard(out[0].device().index());
    KILN_CHECK(src.device() == out[0].device(), "_to_copy: expected {} input, got {}",
               out[0].device().str(), src.device().str());
    device_copy(out[0], src);
  });
  // The dispatcher allocated the outputs already.
  structured("empty", [](const Stack& args, const std::vector<Tensor>& out) {
    check_factory_device(args[2], out[0], "empty");
  });
  structured("empty_strided", [](const Stack& args, const std::vector<Tensor>& out) {
    check_factory_device(args[3], out[0], "empty_strided");
  });
  structured("full", [](const Stack& args, const std::vector<Tensor>& out) {
    check_factory_device(args[3], out[0], "full");
    fill_device(out[0], args[1].to_scalar());
  });
}

}  // namespace kiln::cuda
