// Devices: how many, which is current, and waiting for them.
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/cuda/cuda.h>

namespace kiln::cuda {

int device_count() {
  // Asked once: the answer does not change while the process runs, and without a driver the
  // runtime's error (cudaErrorNoDevice, cudaErrorInsufficientDriver) simply means no device.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

bool is_available() { return device_count() > 0; }

void check_available(const char* what) {
  KILN_CHECK(is_available(),
             "{}: no CUDA device is available (kiln was built with CUDA, but "
             "the runtime finds no device or driver)",
             what);
}

int current_device() {
  check_available("cuda::current_device");
  int d = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) {
  check_available("cuda::set_device");
  KILN_CHECK(device >= 0 && device < device_count(),
             "cuda::set_device: device index {} is out of range: {} CUDA device(s) present", device,
             device_count());
  KILN_CUDA_CHECK(cudaSetDevice(device));
}

int device_index(Device device) {
  KILN_CHECK(device.is_cuda(), "expected a CUDA device, got {}", device.str());
  if (!device.has_index()) return current_device();
  check_available(device.str().c_str());
  KILN_CHECK(device.index() < device_count(),
             "{}: CUDA device index {} is out of range: {} CUDA device(s) present", device.str(),
             device.index(), device_count());
  return device.index();
}

void synchronize(int device) {
  DeviceGuard guard(device);
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceGuard::DeviceGuard(int device) : previous_(current_device()) {
  if (device >= 0 && device != previous_) set_device(device);
}

DeviceGuard::~DeviceGuard() {
  // Restoring a device that was valid cannot fail short of a broken context; a destructor must
  // not throw, so a failure here is left for the next checked call to report.
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
}

}  // namespace kiln::cuda
