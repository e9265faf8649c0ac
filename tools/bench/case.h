#pragma once
// One benchmark case of kiln_bench: a workload of BENCHMARKS.md in one phase (inference or train),
// as an eager step and a compiled step built from identical state (same seed), so that their
// outputs can be compared and their times set side by side.
#include <kiln/capture/compile.h>
#include <kiln/core/device.h>
#include <kiln/core/dtype.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln_bench {

using kiln::Tensor;

// Which shapes a case is built at: BENCHMARKS.md's (its CPU or GPU column, by device), or tiny
// ones for the CI smoke run (on either device).
enum class Shapes { full, tiny };

// Where a case runs and at which shapes. Cases build models and inputs on the CPU (so that a seed
// draws the same values on both devices) and then move them to `device`.
struct Setup {
  Shapes shapes = Shapes::full;
  kiln::Device device = kiln::kCPU;
  // Forward passes (and losses) under kiln::autocast(device, dtype), as PyTorch's
  // `with torch.autocast(...)`; the backward pass and the optimizer outside it.
  std::optional<kiln::DType> autocast = std::nullopt;

  bool tiny() const { return shapes == Shapes::tiny; }
  bool on_gpu() const { return device.is_cuda(); }
  // A size of the workload: `tiny` at tiny shapes, else BENCHMARKS.md's CPU or GPU shape.
  int64_t size(int64_t tiny, int64_t cpu, int64_t gpu) const {
    return this->tiny() ? tiny : on_gpu() ? gpu : cpu;
  }
  // A tensor made on the CPU, on the case's device (the same tensor on the CPU).
  Tensor place(const Tensor& t) const { return on_gpu() ? t.to(device) : t; }
};

// One iteration of each side. Each returns what is compared: the output for inference; the loss
// and one parameter after the optimizer step for training. The compiled side compiles on its
// first call.
struct Step {
  std::function<std::vector<Tensor>()> eager;
  std::function<std::vector<Tensor>()> compiled;
  // What the row should say about how it was built (e.g. an option the compiler refused).
  std::string note = {};
};

struct Case {
  std::string workload;  // an id of BENCHMARKS.md
  std::string phase;     // "inference" or "train"
  // Largest max_rel_err (see accuracy.h) at which compiled still matches eager.
  double tolerance = 1e-4;
  // One step is a pass over several input sizes (bert-dynamic, resnet18-dynamic): the row
  // reports the second pass.
  bool varies_sizes = false;
  // Builds both sides afresh (models from the same seed) for one set of compile options.
  std::function<Step(const kiln::CompileOptions& options, const Setup& setup)> build;
  // False where BENCHMARKS.md gives the workload no GPU shape (numpy: it is measured against
  // numpy itself, on the CPU).
  bool runs_on_gpu = true;
  // Whether Setup::autocast applies (the model workloads).
  bool autocasts = false;
};

// The cases of BENCHMARKS.md in its order (op_cases.cpp, model_cases.cpp, bert_dynamic_case.cpp),
// with kiln's resnet18-dynamic after bert-dynamic (resnet_dynamic_case.cpp).
std::vector<Case> op_cases();
std::vector<Case> model_cases();
Case bert_dynamic_case();
Case resnet_dynamic_case();
std::vector<Case> all_cases();

}  // namespace kiln_bench
