#pragma once
// Runs a program in eager (float32, and float64 as the rounding reference) and compiled under
// each configuration (backend x shape mode x compile mode), forward and, when an input requires
// grad, backward of a random-weighted sum of the float outputs; compares outputs, the inputs
// after the call (argument writes) and gradients.
#include "fuzz/compare.h"
#include "fuzz/program.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::fuzz {

// static: dynamic=false; dynamic: dynamic=true; mark_dynamic: automatic, with one input dim
// marked dynamic (skipped for programs without a dim of size >= 2).
enum class ShapeMode { Static, Dynamic, MarkDynamic };

// How a finding at other sizes (the third call, see run_config) starts its detail.
inline constexpr const char* kAtOtherSizes = "call at other sizes";

struct RunConfig {
  std::string backend = "inductor";
  ShapeMode shapes = ShapeMode::Static;
  std::string mode = "default";  // CompileOptions::mode
  std::string name() const;      // "inductor/dynamic/default"
};

// Every combination; raises kiln::Error for an unknown shape mode name.
std::vector<RunConfig> configs_of(const std::vector<std::string>& backends,
                                  const std::vector<std::string>& shape_modes,
                                  const std::vector<std::string>& modes);

struct EagerRun {
  std::vector<Tensor> outputs;
  std::vector<Tensor> inputs_after;  // detached, after the program's writes
  std::vector<Tensor> grads;         // per input; undefined where none (or no backward)
};

// Raises kiln::Error when eager rejects the program (forward or backward).
EagerRun run_eager(const Program& program, DType float_dtype);

// The program with every input size >= 2 grown by one (equal sizes stay equal, so broadcasting
// holds; sizes 0 and 1 stay, as the compiler specializes them): a call at other sizes, which
// recompiles a static graph and reuses a dynamic one. nullopt when no size is >= 2.
std::optional<Program> at_other_sizes(const Program& program);

// Eager's runs of a program, every configuration's reference: at the generated sizes, and at
// other sizes (at_other_sizes) where eager runs the program there too (its size arguments may
// not fit: a reshape's).
struct EagerRuns {
  EagerRun f32, f64;
  std::optional<Program> other_sizes;
  EagerRun other_f32, other_f64;
};
// Raises kiln::Error when eager rejects the program at its generated sizes.
EagerRuns run_eager_references(const Program& program);

struct Outcome {
  enum class Status { Pass, Skipped, Mismatch, Error };
  RunConfig config;
  Status status = Status::Pass;
  std::string detail;
  bool failed() const { return status == Status::Mismatch || status == Status::Error; }
  // What the shrinker keeps equal: the status, for mismatches whether they are slight and
  // whether they are at other sizes, and for errors the message up to its first ':' (usually the
  // op or the layer that raised; "call at other sizes").
  std::string signature() const;
};

struct ProgramResult {
  bool eager_rejected = false;  // the generator's fault, not the compiler's
  std::string eager_detail;
  std::vector<Outcome> outcomes;
};

// Compiles the program under `config` and calls it twice at its sizes (the first call compiles,
// the second runs the cached entry), then once at other sizes when `eager` has them; each call
// forward and backward, compared with eager.
Outcome run_config(const Program& program, const RunConfig& config, const EagerRuns& eager);
// `progress`, if given, sees the result after the eager runs (no outcomes yet) and after each
// configuration's outcome (crash isolation streams them to its parent).
ProgramResult run_program(const Program& program, const std::vector<RunConfig>& configs,
                          const std::function<void(const ProgramResult&)>& progress = {});

// The (input, dim) that mark_dynamic mode marks: drawn from the program's seed among the inputs'
// dims of size >= 2; none when there is no such dim.
std::optional<std::pair<size_t, int64_t>> marked_dim(const Program& program);

// The tolerance for a program: the loosest sample tolerance the registry declares for its ops,
// at least 1e-5.
Tolerance tolerance_of(const Program& program);

}  // namespace kiln::fuzz
