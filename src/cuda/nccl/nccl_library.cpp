#include "cuda/nccl/nccl_library.h"

#include <kiln/core/error.h>

#include <dlfcn.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::distributed::detail {

namespace {

// NCCL 2.14 brought ncclCommInitRankConfig, non-blocking communicators and ncclCommFinalize.
constexpr int kOldestNccl = 21400;

struct LoadedNccl {
  NcclLibrary functions;
  std::optional<std::string> error;
};

LoadedNccl load_nccl() {
  LoadedNccl loaded;
  // The name the loader's search path finds, then the library the build was configured with.
  std::vector<std::string> candidates = {"libnccl.so.2"};
#ifdef KILN_NCCL_LIBRARY_PATH
  candidates.push_back(KILN_NCCL_LIBRARY_PATH);
#endif
  void* handle = nullptr;
  std::string failures;
  for (const std::string& name : candidates) {
    handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* why = ::dlerror();
    failures += fmt::format("{}{}", failures.empty() ? "" : "; ", why ? why : name);
  }
  if (handle == nullptr) {
    loaded.error = fmt::format(
        "the nccl backend could not load NCCL ({}); install it (the CUDA toolkit's libnccl, or "
        "pip's nvidia-nccl-cu13) where the loader finds it (LD_LIBRARY_PATH)",
        failures);
    return loaded;
  }
  NcclLibrary& f = loaded.functions;
  std::vector<std::string> missing;
  auto bind = [&](auto& slot, const char* symbol) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(::dlsym(handle, symbol));
    if (slot == nullptr) missing.emplace_back(symbol);
  };
  bind(f.get_version, "ncclGetVersion");
  bind(f.get_unique_id, "ncclGetUniqueId");
  bind(f.comm_init_rank_config, "ncclCommInitRankConfig");
  bind(f.comm_get_async_error, "ncclCommGetAsyncError");
  bind(f.comm_abort, "ncclCommAbort");
  bind(f.comm_finalize, "ncclCommFinalize");
  bind(f.comm_destroy, "ncclCommDestroy");
  bind(f.get_error_string, "ncclGetErrorString");
  bind(f.get_last_error, "ncclGetLastError");
  bind(f.all_reduce, "ncclAllReduce");
  bind(f.broadcast, "ncclBroadcast");
  bind(f.all_gather, "ncclAllGather");
  bind(f.reduce_scatter, "ncclReduceScatter");
  int version = 0;
  if (missing.empty()) f.get_version(&version);
  if (!missing.empty() || version < kOldestNccl) {
    loaded.error = fmt::format(
        "the nccl backend needs NCCL 2.14 or newer; the loaded libnccl.so.2 is version {} and "
        "lacks {}",
        version,
        missing.empty() ? std::string("nothing but its age")
                        : fmt::format("{}", fmt::join(missing, ", ")));
  }
  return loaded;  // the library stays loaded for the process (a cache, never unloaded)
}

}  // namespace

const NcclLibrary& nccl() {
  static const LoadedNccl loaded = load_nccl();
  if (loaded.error) throw_error(*loaded.error);
  return loaded.functions;
}

}  // namespace kiln::distributed::detail
