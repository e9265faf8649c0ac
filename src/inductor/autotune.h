#pragma once
// max-autotune's choices at run time (DESIGN.md §5; docs/INDUCTOR.md): at the first call of a
// compiled program each tuning site's candidates run on the real buffers, are timed (median of a
// few runs after a warm-up) and the fastest is used from then on. Sites:
//   a loop nest's function and its variants (kernel_variants.h), keyed by the default function's
//   name ("kernel3"; nests sharing a function share the decision), labels "default",
//   "one_thread", ...;
//   a small matmul's extern call and generated kernels (gemm_alternative.h), keyed by the op, its
//   inputs' layouts and the generated functions, labels "extern" and "generated".
// The winners are kept in the module's code cache entry (autotune_winners.h) and reused by later
// compilations with the same source, machine and thread count without timing.
// options{"autotune_force": "<label>"} (debugging, tests) takes that label wherever a site has it
// and the default elsewhere, without timing or files.
#include "inductor/autotune_winners.h"

#include <kiln/backends/backend.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::inductor {

struct AutotuneSettings {
  bool enabled = false;
  std::optional<std::string> force;
  std::filesystem::path
      cache_entry;         // the module's code cache entry folder; empty: no winners kept
  std::string graph_name;  // for logs
};

// Whether `mode` is max-autotune ("max-autotune" or "max-autotune-no-cudagraphs").
bool is_max_autotune(const std::string& mode);

// The settings of a graph compiled with `context` (cache_entry left empty: the caller sets it
// to the entry folder of the module, once compiled). Raises kiln::Error when
// options{"autotune_force"} names no variant.
AutotuneSettings autotune_settings(const BackendContext& context);

// One choice: a key and its candidates' labels, the default first.
struct TuningSite {
  std::string key;
  std::vector<std::string> labels;
};

// The decisions of one tuning run (the first call of a compiled program).
class Autotuner {
 public:
  explicit Autotuner(AutotuneSettings settings);

  // The candidate to use if already decided (forced, from the winners file or by an earlier
  // site with the same key), else nullopt: time() it.
  std::optional<size_t> decided(const TuningSite& site);
  // Runs each candidate (run(i)) a few times, records and returns the fastest. Candidates must
  // compute the same values and be safe to repeat.
  size_t time(const TuningSite& site, const std::function<void(size_t)>& run);
  // The default, not timed (e.g. a kernel that updates its input in place); logged with `why`.
  size_t keep_default(const TuningSite& site, const std::string& why);
  // Writes the winners file when something was timed or the file was malformed.
  void finish();

 private:
  void record(const TuningSite& site, size_t chosen);

  AutotuneSettings settings_;
  std::filesystem::path winners_file_;  // empty: none
  std::string machine_;
  int threads_;
  Winners from_file_;  // what the winners file held (valid for this machine)
  Winners chosen_;     // this run's decisions
  bool rewrite_ = false;
};

// How many tuning sites were timed in this process (tests: a reused winners file times none).
size_t autotune_timings();

// Threads the generated kernels run on (OpenMP's current maximum).
int autotune_threads();

}  // namespace kiln::inductor
