#include <kiln/distributed/init.h>

#include <kiln/core/error.h>
#include <kiln/distributed/process_group_gloo.h>
#include <kiln/distributed/process_group_nccl.h>
#include <kiln/distributed/tcp_store.h>

#include "distributed/environment.h"

#include <mutex>

namespace kiln::distributed {

namespace {

// The default group: the one process-wide registry of this layer.
struct DefaultGroup {
  std::mutex mutex;
  std::shared_ptr<ProcessGroup> group;
  int local_rank = 0;
  int initializations = 0;  // numbers each group's keys in a store that outlives it
};

DefaultGroup& default_group() {
  static DefaultGroup instance;
  return instance;
}

int required(std::optional<int> given, const char* variable, const char* what) {
  if (given) return *given;
  auto from_env = detail::env_int(variable);
  KILN_CHECK(from_env.has_value(),
             "init_process_group: {} is not given and the environment variable {} is not set "
             "(launchers such as torchrun set it)",
             what, variable);
  return *from_env;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.starts_with("127.") || host == "::1";
}

}  // namespace

void init_process_group(const InitOptions& options) {
  KILN_CHECK(options.backend == "gloo" || options.backend == "nccl",
             "init_process_group: unknown backend '{}'; available: 'gloo' (CPU tensors) and "
             "'nccl' (CUDA tensors, in the CUDA build)",
             options.backend);
  int world_size = required(options.world_size, "WORLD_SIZE", "world_size");
  int rank = required(options.rank, "RANK", "rank");
  KILN_CHECK(world_size >= 1, "init_process_group: world_size must be at least 1, got {}",
             world_size);
  KILN_CHECK(rank >= 0 && rank < world_size,
             "init_process_group: rank must be in [0, {}) for world_size {}, got {}", world_size,
             world_size, rank);
  KILN_CHECK(options.timeout.count() > 0, "init_process_group: timeout must be positive, got {} ms",
             options.timeout.count());

  auto& registry = default_group();
  std::lock_guard lock(registry.mutex);
  KILN_CHECK(registry.group == nullptr,
             "init_process_group: the default process group is already initialized (rank {} of "
             "{}); call destroy_process_group() first",
             registry.group ? registry.group->rank() : 0,
             registry.group ? registry.group->world_size() : 0);

  const std::string store_prefix = fmt::format("kiln/pg{}/", registry.initializations);
  std::shared_ptr<Store> store = options.store;
  std::string master_addr = options.master_addr.value_or(
      detail::env_string("MASTER_ADDR").value_or(options.store ? "" : "127.0.0.1"));
  if (!store) {
    int port = required(options.master_port, "MASTER_PORT", "master_port");
    store = std::make_shared<TCPStore>(master_addr, port, world_size, rank == 0, options.timeout);
  }
  if (options.backend == "nccl") {
    ProcessGroupNcclOptions nccl_options;
    nccl_options.timeout = options.timeout;
    nccl_options.store_prefix = store_prefix;
    nccl_options.device = options.device_id;
    registry.group = std::make_shared<ProcessGroupNccl>(store, rank, world_size, nccl_options);
  } else {
    ProcessGroupGlooOptions gloo_options;
    gloo_options.timeout = options.timeout;
    gloo_options.store_prefix = store_prefix;
    // On one machine the peers talk over loopback; elsewhere GLOO_SOCKET_IFNAME or the host name.
    if (auto iface = detail::env_string("GLOO_SOCKET_IFNAME")) {
      gloo_options.interface = *iface;
    } else if (master_addr.empty() || is_loopback(master_addr)) {
      gloo_options.hostname = "127.0.0.1";
    }
    registry.group = std::make_shared<ProcessGroupGloo>(store, rank, world_size, gloo_options);
  }
  registry.local_rank = detail::env_int("LOCAL_RANK").value_or(rank);
  ++registry.initializations;
}

void destroy_process_group() {
  std::shared_ptr<ProcessGroup> group;
  {
    auto& registry = default_group();
    std::lock_guard lock(registry.mutex);
    group.swap(registry.group);
  }
  // Destroyed outside the lock: its worker thread may take up to the timeout to finish.
}

bool is_initialized() {
  auto& registry = default_group();
  std::lock_guard lock(registry.mutex);
  return registry.group != nullptr;
}

std::shared_ptr<ProcessGroup> default_process_group(const char* who) {
  auto& registry = default_group();
  std::lock_guard lock(registry.mutex);
  KILN_CHECK(registry.group != nullptr,
             "{}: the default process group is not initialized; call "
             "kiln::distributed::init_process_group() first",
             who);
  return registry.group;
}

int get_rank() { return default_process_group("get_rank")->rank(); }

int get_world_size() { return default_process_group("get_world_size")->world_size(); }

int get_local_rank() {
  auto group = default_process_group("get_local_rank");
  auto& registry = default_group();
  std::lock_guard lock(registry.mutex);
  return registry.local_rank;
}

std::string get_backend() { return default_process_group("get_backend")->backend_name(); }

}  // namespace kiln::distributed
