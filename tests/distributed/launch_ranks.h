#pragma once
// Launches kiln_dist_worker once per rank on loopback (posix_spawn: safe from a process whose
// threads already run, unlike a bare fork) and collects each rank's exit code and results.
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kiln::testing {

struct RankResult {
  int exit_code = -1;  // -1: killed after the time limit
  std::map<std::string, std::vector<double>> values;
  std::vector<std::string> errors;  // the "error ..." lines

  const std::vector<double>& at(const std::string& name) const;
};

// What kiln_dist_worker wrote for `rank` in results directory dir (exit_code left at -1).
RankResult read_rank_results(const std::string& dir, int rank);

// A TCP port nobody listens on right now.
int free_port();

// Starts the ranks in `ranks` (all of 0..world_size-1 when empty) of a world of world_size running
// `scenario`; kills whatever still runs after limit. Returns one result per started rank.
std::vector<RankResult> launch_ranks(const std::string& scenario, int world_size,
                                     std::vector<int> ranks = {},
                                     std::chrono::seconds limit = std::chrono::seconds(30));

}  // namespace kiln::testing
