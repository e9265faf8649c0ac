#pragma once
// Runtime compilation for the inductor's CUDA code generator: CUDA C++ source to a cubin with
// NVRTC, a cubin loaded as a library of kernels, and launches on the current stream. No CUDA
// types here, so that the inductor can call it without the toolkit's headers; without the toolkit
// (src/cuda/without_toolkit) every entry point raises.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::cuda {

// NVRTC's target for `device` (its compute capability): "sm_90" on an H100/H200.
std::string architecture(int device);
// The device's model ("NVIDIA H100 80GB HBM3"): max-autotune's winners are per model.
std::string device_name(int device);
// "nvrtc <major>.<minor>": part of the code cache's key.
std::string compiler_version();
// `source` compiled for `architecture` into a cubin. A compile error raises kiln::Error with
// `name` and NVRTC's log. Needs NVRTC, not a GPU.
std::string compile_to_cubin(const std::string& source, const std::string& architecture,
                             const std::string& name);

// A cubin loaded as a CUDA library (valid on every device); unloaded with the last reference.
class KernelLibrary {
 public:
  explicit KernelLibrary(std::string_view cubin);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // A kernel of the library by its (extern "C") name; raises when it has none.
  const void* kernel(const std::string& name) const;
  // Launches `kernel` on the current stream of the current device: a one-dimensional grid of
  // `blocks` blocks of `threads` threads with `shared_bytes` of dynamic shared memory, and one
  // argument: the kernel's parameter struct at `argument` (its size is the kernel's).
  static void launch(const void* kernel, int64_t blocks, int threads, int64_t shared_bytes,
                     const void* argument);

 private:
  void* library_ = nullptr;
};

}  // namespace kiln::cuda
