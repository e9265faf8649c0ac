#pragma once
// The launcher behind `kiln run` (torchrun's standalone mode): starts nproc_per_node copies of a
// program on this machine, one per rank, with the environment init_process_group reads (RANK,
// LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and watches them. When a
// rank fails the others are stopped (SIGTERM, then SIGKILL after grace_period); SIGINT and
// SIGTERM sent to the launcher are passed on to the ranks.
#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::distributed {

struct LaunchOptions {
  int nproc_per_node = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a port that is free now
  // The whole job's limit: past it the ranks are stopped and the launch fails. None: no limit.
  std::optional<std::chrono::milliseconds> timeout;
  // How long a rank may take to exit after SIGTERM before it gets SIGKILL.
  std::chrono::milliseconds grace_period = std::chrono::seconds(5);
  // The program (looked up on PATH) and its arguments.
  std::vector<std::string> command;
};

// How one rank ended.
struct RankExit {
  int rank = 0;
  int exit_code = 0;     // when it exited
  int signal = 0;        // when a signal ended it (0: it exited)
  bool stopped = false;  // the launcher ended it, after another rank failed or on a signal
};

struct LaunchResult {
  // 0 when every rank exited with 0; otherwise non-zero (1, or 128 + the signal the launcher
  // received).
  int exit_code = 0;
  std::vector<RankExit> ranks;     // by rank
  std::optional<int> failed_rank;  // the first rank that failed
  int master_port = 0;             // the port the ranks were given
};

// Runs the job to its end. Writes what went wrong to `log` (which rank failed and how).
LaunchResult launch(const LaunchOptions& options, std::ostream& log);

}  // namespace kiln::distributed
