#pragma once
// What the figures were measured on: the JSON's `machine` object.
#include <kiln/core/device.h>

#include <optional>
#include <string>

namespace kiln_bench {

struct Machine {
  std::string cpu;                 // /proc/cpuinfo's model name
  unsigned cores = 0;              // logical CPUs
  int threads = 0;                 // threads kiln ran with
  std::optional<std::string> gpu;  // the GPU's name when the run is on one, else unset
  std::string date;                // UTC, ISO 8601
  std::string kiln_commit;         // git rev-parse --short HEAD of the source tree
  double load_average = 0;         // 1-minute load when the run started: others' work skews figures
};

// The machine the run is on; names the GPU when `device` is one.
Machine describe_machine(int threads, kiln::Device device);

}  // namespace kiln_bench
