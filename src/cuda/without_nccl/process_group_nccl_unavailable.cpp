// ProcessGroupNccl in a build without NCCL (cmake/cuda.cmake compiles this file when there is no
// CUDA toolkit, or a toolkit without libnccl/nccl.h): constructing one raises, saying why.
#include <kiln/core/error.h>
#include <kiln/distributed/process_group_nccl.h>

namespace kiln::distributed {

namespace {
#ifdef KILN_WITHOUT_NCCL_ONLY
constexpr const char* kMissing =
    "this CUDA build found no NCCL (libnccl.so and nccl.h beside the toolkit)";
#else
constexpr const char* kMissing = "this build has no CUDA";
#endif

[[noreturn]] void unavailable() {
  throw_error(fmt::format(
      "the nccl backend needs kiln's CUDA build with NCCL, and {}; use backend 'gloo' for CPU "
      "tensors",
      kMissing));
}
}  // namespace

struct ProcessGroupNccl::Impl {};

ProcessGroupNccl::ProcessGroupNccl(std::shared_ptr<Store>, int rank, int world_size,
                                   ProcessGroupNcclOptions)
    : ProcessGroup(rank, world_size) {
  unavailable();
}
ProcessGroupNccl::~ProcessGroupNccl() = default;
std::chrono::milliseconds ProcessGroupNccl::timeout() const { unavailable(); }
int ProcessGroupNccl::device() const { unavailable(); }
Work ProcessGroupNccl::all_reduce(Tensor&, ReduceOp, bool) { unavailable(); }
Work ProcessGroupNccl::broadcast(Tensor&, int, bool) { unavailable(); }
Work ProcessGroupNccl::all_gather(std::vector<Tensor>&, const Tensor&, bool) { unavailable(); }
Work ProcessGroupNccl::all_gather_into_tensor(Tensor&, const Tensor&, bool) { unavailable(); }
Work ProcessGroupNccl::reduce_scatter(Tensor&, const std::vector<Tensor>&, ReduceOp, bool) {
  unavailable();
}
Work ProcessGroupNccl::reduce_scatter_tensor(Tensor&, const Tensor&, ReduceOp, bool) {
  unavailable();
}
Work ProcessGroupNccl::barrier(bool) { unavailable(); }

}  // namespace kiln::distributed
