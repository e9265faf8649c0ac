#pragma once
// One benchmark case of kiln_bench: a workload of BENCHMARKS.md in one phase (inference or train),
// as an eager step and a compiled step built from identical state (same seed), so that their
// outputs can be compared and their times set side by side.
#include <kiln/capture/compile.h>

#include <functional>
#include <string>
#include <vector>

namespace kiln_bench {

using kiln::Tensor;

// Which shapes a case is built at: BENCHMARKS.md's CPU shapes, or tiny ones for the CI smoke run.
enum class Shapes { full, tiny };

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
  // One step is a pass over several input sizes (bert-dynamic): the row reports the second pass.
  bool varies_sizes = false;
  // Builds both sides afresh (models from the same seed) for one set of compile options.
  std::function<Step(const kiln::CompileOptions& options, Shapes shapes)> build;
};

// The cases of BENCHMARKS.md in its order (op_cases.cpp, model_cases.cpp, bert_dynamic_case.cpp).
std::vector<Case> op_cases();
std::vector<Case> model_cases();
Case bert_dynamic_case();
std::vector<Case> all_cases();

}  // namespace kiln_bench
