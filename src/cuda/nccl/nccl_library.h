#pragma once
// NCCL, loaded when the first nccl process group is made (dlopen), not linked: libkiln then
// neither needs libnccl to load nor puts its NCCL's symbols in the process, where a later
// library with its own newer NCCL (PyTorch's libtorch_cuda, imported beside kiln's Python
// module) would bind to them and fail on a function the older one lacks.
#include <nccl.h>

namespace kiln::distributed::detail {

struct NcclLibrary {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) comm_init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommFinalize) comm_finalize = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGetLastError) get_last_error = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
};

// The loaded library (once per process); raises kiln::Error saying what is missing when
// libnccl.so.2 cannot be loaded, lacks a function, or is older than NCCL 2.14 (non-blocking
// communicators).
const NcclLibrary& nccl();

}  // namespace kiln::distributed::detail
