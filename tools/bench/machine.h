#pragma once
// What the figures were measured on: the JSON's `machine` object.
#include <optional>
#include <string>

namespace kiln_bench {

struct Machine {
  std::string cpu;                 // /proc/cpuinfo's model name
  unsigned cores = 0;              // logical CPUs
  int threads = 0;                 // threads kiln ran with
  std::optional<std::string> gpu;  // none until the CUDA issue lands
  std::string date;                // UTC, ISO 8601
  std::string kiln_commit;         // git rev-parse --short HEAD of the source tree
  double load_average = 0;         // 1-minute load when the run started: others' work skews figures
};

Machine describe_machine(int threads);

}  // namespace kiln_bench
