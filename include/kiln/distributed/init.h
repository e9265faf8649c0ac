#pragma once
// The default process group (torch.distributed's init_process_group and friends). Rank, world size
// and the master's address default to the environment torchrun (and kiln's launcher) set: RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT.
#include <kiln/distributed/process_group.h>
#include <kiln/distributed/store.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace kiln::distributed {

struct InitOptions {
  // "gloo" (CPU tensors) or "nccl" (CUDA tensors; the CUDA build with NCCL).
  std::string backend = "gloo";
  std::optional<int> rank;        // default: $RANK
  std::optional<int> world_size;  // default: $WORLD_SIZE
  // Where the ranks meet. Default: a TCPStore at master_addr:master_port that rank 0 hosts.
  std::shared_ptr<Store> store;
  std::optional<std::string> master_addr;  // default: $MASTER_ADDR
  std::optional<int> master_port;          // default: $MASTER_PORT
  // How long rendezvous and each collective may wait for a peer before failing.
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  // nccl: the GPU this rank drives (torch's device_id); default $LOCAL_RANK modulo the GPUs.
  std::optional<int> device_id;
};

void init_process_group(const InitOptions& options = {});
// Shuts the default group down (joining its worker thread); a no-op when there is none.
void destroy_process_group();
bool is_initialized();

// The default group; raises kiln::Error naming `who` when init_process_group was not called.
std::shared_ptr<ProcessGroup> default_process_group(const char* who = "default_process_group");
int get_rank();
int get_world_size();
// This process's rank on its machine: $LOCAL_RANK, or the global rank when unset.
int get_local_rank();
std::string get_backend();

}  // namespace kiln::distributed
