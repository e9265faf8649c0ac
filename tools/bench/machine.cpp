#include "machine.h"

#include <stdlib.h>

#include <fmt/chrono.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "child_process.h"

namespace kiln_bench {
namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line
                                        : line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

// KILN_COMMIT when set (a bundle run away from its source tree: bench/device/run_cpu_suite.sh
// sets the commit it was packed at), else the source tree's commit now (the binary may be older
// than the last commit), else the one configured into the build.
std::string kiln_commit() {
  if (const char* packed = std::getenv("KILN_COMMIT"); packed != nullptr && *packed != '\0') {
    return packed;
  }
  ChildOutput git =
      run_child({"/usr/bin/git", "-C", KILN_BENCH_SOURCE_DIR, "rev-parse", "--short", "HEAD"});
  std::string id = git.stdout_text.substr(0, git.stdout_text.find_first_of("\r\n"));
  if (git.exit_status == 0 && !id.empty()) return id;
  return KILN_BENCH_CONFIGURED_COMMIT;
}

std::string utc_now() { return fmt::format("{:%FT%TZ}", fmt::gmtime(std::time(nullptr))); }

}  // namespace

Machine describe_machine(int threads) {
  Machine m;
  m.cpu = cpu_model();
  m.cores = std::thread::hardware_concurrency();
  m.threads = threads;
  m.date = utc_now();
  m.kiln_commit = kiln_commit();
  double load[1] = {0};
  if (::getloadavg(load, 1) == 1) m.load_average = load[0];
  return m;
}

}  // namespace kiln_bench
