#include "cuda/runtime_compile.h"

#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <fmt/format.h>
#include <nvrtc.h>

#include <vector>

namespace kiln::cuda {
namespace {

// Dynamic shared memory a kernel may use without opting in.
constexpr int64_t kDefaultSharedBytes = 48 * 1024;

void check_nvrtc(nvrtcResult status, const char* call, const std::string& name) {
  if (status != NVRTC_SUCCESS) {
    throw_error(
        fmt::format("NVRTC error: {} failed for {}: {}", call, name, nvrtcGetErrorString(status)));
  }
}

// Frees an NVRTC program whatever happens to the compilation.
class Program {
 public:
  Program(const std::string& source, const std::string& name) : name_(name) {
    check_nvrtc(
        nvrtcCreateProgram(&program_, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram", name);
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  std::string log() const {
    size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size <= 1) return "";
    std::string text(size, '\0');
    nvrtcGetProgramLog(program_, text.data());
    text.resize(size - 1);
    return text;
  }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
  std::string name_;
};

}  // namespace

std::string architecture(int device) {
  check_available("cuda::architecture");
  int major = 0, minor = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return fmt::format("sm_{}{}", major, minor);
}

std::string device_name(int device) {
  check_available("cuda::device_name");
  cudaDeviceProp properties{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

std::string compiler_version() {
  int major = 0, minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion", "the version query");
  return fmt::format("nvrtc {}.{}", major, minor);
}

std::string compile_to_cubin(const std::string& source, const std::string& architecture,
                             const std::string& name) {
  Program program(source, name);
  // IEEE results as the CPU's (no fast math: exp, erf and division to within an ulp or two).
  const std::string arch = "--gpu-architecture=" + architecture;
  const std::vector<const char*> options = {arch.c_str(), "--std=c++17", "-default-device"};
  const nvrtcResult status =
      nvrtcCompileProgram(program.get(), static_cast<int>(options.size()), options.data());
  if (status == NVRTC_ERROR_COMPILATION) {
    throw_error(
        fmt::format("NVRTC could not compile {} for {}:\n{}", name, architecture, program.log()));
  }
  check_nvrtc(status, "nvrtcCompileProgram", name);
  size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize", name);
  std::string cubin(size, '\0');
  check_nvrtc(nvrtcGetCUBIN(program.get(), cubin.data()), "nvrtcGetCUBIN", name);
  return cubin;
}

KernelLibrary::KernelLibrary(std::string_view cubin) {
  check_available("cuda::KernelLibrary");
  cudaLibrary_t library = nullptr;
  KILN_CUDA_CHECK(
      cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  library_ = library;
}

KernelLibrary::~KernelLibrary() {
  // At exit the runtime may be gone already; nothing to report then.
  if (library_ != nullptr) (void)cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

const void* KernelLibrary::kernel(const std::string& name) const {
  cudaKernel_t kernel = nullptr;
  KILN_CUDA_CHECK(
      cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(library_), name.c_str()));
  return kernel;
}

void KernelLibrary::launch(const void* kernel, int64_t blocks, int threads, int64_t shared_bytes,
                           const void* argument) {
  const int device = current_device();
  if (shared_bytes > kDefaultSharedBytes) {
    KILN_CUDA_CHECK(cudaKernelSetAttributeForDevice(
        static_cast<cudaKernel_t>(const_cast<void*>(kernel)),
        cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes), device));
  }
  void* arguments[] = {const_cast<void*>(argument)};
  KILN_CUDA_CHECK(cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)),
                                   dim3(static_cast<unsigned>(threads)), arguments,
                                   static_cast<size_t>(shared_bytes), stream_of(device)));
}

}  // namespace kiln::cuda
