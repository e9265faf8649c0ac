#include "machine.h"

#include <stdlib.h>
#include <unistd.h>

#include <fmt/chrono.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string_view>
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

// The path of `program` on PATH (run_child takes a path), or empty.
std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
  }
  return {};
}

// kiln::cuda has no device properties: the driver's tool names the GPU (the first one listed,
// the device kiln_bench runs on unless CUDA_VISIBLE_DEVICES reorders them).
std::string gpu_name() {
  const std::string nvidia_smi = find_on_path("nvidia-smi");
  if (nvidia_smi.empty()) return "unknown GPU (no nvidia-smi on PATH)";
  ChildOutput smi = run_child({nvidia_smi, "--query-gpu=name", "--format=csv,noheader"});
  std::string name = smi.stdout_text.substr(0, smi.stdout_text.find_first_of("\r\n"));
  if (smi.exit_status != 0 || name.empty()) return "unknown GPU (nvidia-smi failed)";
  return name;
}

std::string utc_now() { return fmt::format("{:%FT%TZ}", fmt::gmtime(std::time(nullptr))); }

}  // namespace

Machine describe_machine(int threads, kiln::Device device) {
  Machine m;
  if (device.is_cuda()) m.gpu = gpu_name();
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
