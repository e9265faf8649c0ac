#include "inductor/cuda_kernels.h"

#include "cuda/runtime_compile.h"
#include "inductor/cache_files.h"
#include "inductor/code_cache.h"
#include "inductor/content_hash.h"

#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

namespace kiln::inductor {

namespace {

namespace fs = std::filesystem;

constexpr size_t kHashDigits = 32;
// Grid-stride kernels need no more blocks than this to fill a device.
constexpr int64_t kMaxBlocks = int64_t{1} << 21;

std::atomic<size_t> compilations{0};

// The cubin of a cache file, or nullopt when the file is missing, truncated or corrupted.
std::optional<std::string> verified_cubin(const fs::path& path) {
  std::optional<std::string> bytes = read_whole_file(path);
  if (!bytes) return std::nullopt;
  if (bytes->size() <= kHashDigits) {
    logs::log(
        logs::Channel::perf_hints,
        fmt::format("inductor: the cached cubin {} is truncated; rebuilding it", path.string()));
    return std::nullopt;
  }
  const size_t size = bytes->size() - kHashDigits;
  if (content_hash(std::string_view(*bytes).substr(0, size)) != bytes->substr(size)) {
    logs::log(
        logs::Channel::perf_hints,
        fmt::format("inductor: the cached cubin {} is corrupted; rebuilding it", path.string()));
    return std::nullopt;
  }
  bytes->resize(size);
  return bytes;
}

// The cache key of a source compiled for an architecture by this NVRTC.
std::string cuda_cache_key(const std::string& source, const std::string& architecture) {
  const std::string compiler = cuda::compiler_version();
  std::string material;
  for (std::string_view part : {std::string_view("kiln cuda cache v1"), std::string_view(source),
                                std::string_view(architecture), std::string_view(compiler)}) {
    material += fmt::format("{}:{}", part.size(), part);
  }
  return content_hash(material);
}

// Loaded libraries by cache key: each source compiled and loaded once per process.
std::shared_ptr<const cuda::KernelLibrary> library_for(const std::string& source, size_t kernels,
                                                       const std::string& architecture,
                                                       std::string_view what) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const cuda::KernelLibrary>> loaded;
  const std::string key = cuda_cache_key(source, architecture);
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  auto library = std::make_shared<const cuda::KernelLibrary>(
      cached_cubin(source, architecture, what, kernels));
  loaded.emplace(key, library);
  return library;
}

}  // namespace

std::string cached_cubin(const std::string& source, const std::string& architecture,
                         std::string_view what, size_t kernels) {
  const std::string key = cuda_cache_key(source, architecture);
  const fs::path dir = cache_dir() / "cuda";
  create_private_directory(dir, "set KILN_CACHE_DIR to a writable folder");
  const fs::path cubin_path = dir / (key + ".cubin");
  if (std::optional<std::string> cubin = verified_cubin(cubin_path)) return *cubin;
  const fs::path source_path = dir / (key + ".cu");
  replace_file(source_path, source);
  std::string cubin;
  // NVRTC compiles the whole source at once: progress is none, then all.
  logs::log(logs::Channel::compile_progress,
            fmt::format("{}: 0 of {} kernels compiled", what, kernels));
  try {
    cubin = cuda::compile_to_cubin(source, architecture, std::string(what));
  } catch (const Error& e) {
    KILN_FAIL("inductor: could not compile the CUDA kernels of {} (source kept in {}): {}", what,
              source_path.string(), e.what());
  }
  ++compilations;
  logs::log(logs::Channel::compile_progress,
            fmt::format("{}: {} of {} kernels compiled", what, kernels, kernels));
  replace_file(cubin_path, cubin + content_hash(cubin));
  return cubin;
}

KernelLoader cuda_kernels(const CudaSource& source, size_t num_symbols, int device,
                          std::string_view what) {
  std::shared_ptr<const cuda::KernelLibrary> library =
      library_for(source.text, source.launches.size(), cuda::architecture(device), what);
  std::map<std::string, CudaLaunch> launches = source.launches;
  return [library, launches = std::move(launches), num_symbols](
             const LoopNest& nest, const std::string& function) -> KernelFunction {
    const CudaLaunch& launch = launches.at(function);
    const void* kernel = library->kernel(launch.symbol.empty() ? function : launch.symbol);
    const size_t num_args = nest.args.size();
    const std::optional<int64_t> fixed_blocks = launch.blocks.constant_value();
    return [library, kernel, launch, fixed_blocks, num_args, num_symbols](void* const* args,
                                                                          const int64_t* symbols) {
      const int64_t blocks =
          fixed_blocks ? *fixed_blocks
                       : evaluate_sizes({launch.blocks}, std::span(symbols, num_symbols)).front();
      if (blocks <= 0) return;  // nothing to compute
      // The kernel's parameter struct: the pointers, then the symbols, 8 bytes each; on the stack
      // (no allocation per launch) up to 4 KiB, CUDA's limit for a kernel's parameters.
      std::array<uint64_t, 512> parameter;
      KILN_CHECK(num_args + num_symbols <= parameter.size(),
                 "inductor: a CUDA kernel takes {} buffers and {} sizes, more than its 4 KiB of "
                 "parameters hold",
                 num_args, num_symbols);
      std::memcpy(parameter.data(), args, num_args * sizeof(void*));
      std::memcpy(parameter.data() + num_args, symbols, num_symbols * sizeof(int64_t));
      for (const auto& [at, bytes] : launch.host_scalars) {
        parameter[static_cast<size_t>(at)] = 0;
        std::memcpy(&parameter[static_cast<size_t>(at)], args[at], static_cast<size_t>(bytes));
      }
      cuda::KernelLibrary::launch(kernel, std::min(blocks, kMaxBlocks), launch.threads,
                                  launch.shared_bytes, parameter.data());
    };
  };
}

size_t cuda_compilation_count() { return compilations.load(); }

std::filesystem::path cuda_autotune_entry(const CudaSource& source, int device) {
  const std::string key = cuda_cache_key(source.text, cuda::architecture(device));
  // Devices of one architecture differ in bandwidth and SMs: the winners are per device model.
  return cache_dir() / "cuda" / "autotune" /
         fmt::format("{}-{}", key, content_hash(cuda::device_name(device)).substr(0, 16));
}

}  // namespace kiln::inductor
