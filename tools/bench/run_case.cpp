#include "run_case.h"

#include <fmt/format.h>
#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>

#include "accuracy.h"
#include "child_process.h"
#include "scoped_env.h"
#include "temp_dir.h"

namespace kiln_bench {
namespace {

constexpr std::string_view kWarmPrefix = "warm_compile_s=";
// max_rel_err allowed under autocast (see run_case).
constexpr double kAutocastTolerance = 5e-2;

kiln::CompileOptions compile_options(const std::string& mode, const RunOptions& options) {
  return {.mode = mode, .backend = options.backend};
}

class Progress {
 public:
  Progress(const Case& c, const std::string& mode, bool quiet)
      : prefix_(fmt::format("[kiln_bench] {} {} ({})", c.workload, c.phase, mode)), quiet_(quiet) {}
  // Prefixed with the seconds since the run started, so that slow steps stand out.
  void say(std::string_view what) const {
    if (quiet_) return;
    static const auto start = std::chrono::steady_clock::now();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "{:7.1f}s {}: {}\n", elapsed, prefix_, what);
  }

 private:
  std::string prefix_;
  bool quiet_;
};

double warm_compile_seconds(const Case& c, const std::string& mode, const RunOptions& options,
                            const std::filesystem::path& cache) {
  std::vector<std::string> argv = {self_executable()};
  for (std::string& arg : warm_compile_arguments(c, mode, options)) argv.push_back(arg);
  ChildOutput child = run_child(argv, {{"KILN_CACHE_DIR", cache.string()}});
  const size_t at = child.stdout_text.rfind(kWarmPrefix);
  KILN_CHECK(child.exit_status == 0 && at != std::string::npos,
             "the warm-compile process exited with status {} and printed no time",
             child.exit_status);
  return std::stod(child.stdout_text.substr(at + kWarmPrefix.size()));
}

void measure(const Case& c, const std::string& mode, const RunOptions& options,
             CaptureCounter& counter, const Progress& progress, Result& r) {
  progress.say("building");
  const kiln::Device device = options.setup.device;
  const Step step = c.build(compile_options(mode, options), options.setup);
  if (!step.note.empty()) r.note = step.note;
  const std::vector<Tensor> eager_out = step.eager();

  // Everything this row compiles goes to its own cache: empty now (cold), reused by the
  // warm-compile process, removed at the end.
  TempDir cache("kiln-bench-cache");
  ScopedEnv cache_env("KILN_CACHE_DIR", cache.path().string());
  progress.say("compiling (empty code cache)...");
  counter.reset();
  std::vector<Tensor> compiled_out;
  {
    // Kernels compiled of each graph's total, as the compiler finishes them.
    counter.on_compile_progress([&progress](std::string_view message) { progress.say(message); });
    struct Unhook {
      CaptureCounter& counter;
      ~Unhook() { counter.on_compile_progress({}); }
    } unhook{counter};
    r.compile_s_cold = seconds_of(device, [&] { compiled_out = step.compiled(); });
  }
  const CaptureCounts first = counter.counts();
  r.graphs = first.graphs;
  r.graph_breaks = first.graph_breaks;
  r.max_rel_err = max_rel_err(eager_out, compiled_out);
  progress.say(fmt::format("compiled in {:.3g} s: {} graphs, {} graph breaks, max_rel_err {:.2g}",
                           *r.compile_s_cold, first.graphs, first.graph_breaks, *r.max_rel_err));
  if (c.varies_sizes) {
    r.second_pass_ms = seconds_of(device, step.compiled) * 1e3;
    r.recompiles = first.recompiles;
    r.recompiles_second_pass = counter.counts().recompiles - first.recompiles;
  }

  const double eager_s = seconds_of(device, step.eager);
  const double compiled_s = seconds_of(device, step.compiled);
  const InterleavedTimes times = time_interleaved(
      step, device, options.timing, eager_s, compiled_s,
      [&](int repeat, const InterleavedTimes& batches) {
        progress.say(fmt::format("iterations: repeat {}/{} ({} eager, {} compiled per batch)",
                                 repeat + 1, options.timing.repeats, batches.eager_iters,
                                 batches.compiled_iters));
      });
  r.eager_ms = times.eager_ms;
  r.compiled_ms = times.compiled_ms;
  r.speedup = times.eager_ms / times.compiled_ms;
  if (c.workload == "overhead") r.overhead_us = (times.compiled_ms - times.eager_ms) * 1e3;
  if (!c.varies_sizes) r.recompiles = counter.counts().recompiles;
  r.peak_mb = times.compiled_peak_mb;
  r.eager_peak_mb = times.eager_peak_mb;

  progress.say("warm compile in a fresh process (filled code cache)...");
  r.compile_s_warm = warm_compile_seconds(c, mode, options, cache.path());
  if (const size_t warnings = counter.counts().warnings; warnings > 0) {
    r.note = fmt::format("{}{} compile warnings (stderr)", r.note ? *r.note + "; " : "", warnings);
  }
}

}  // namespace

Result run_case(const Case& c, const std::string& mode, const RunOptions& options,
                CaptureCounter& counter) {
  Result r;
  r.workload = c.workload;
  r.device = options.setup.on_gpu() ? "cuda" : "cpu";
  r.phase = c.phase;
  r.mode = mode;
  r.tolerance = c.tolerance;
  if (options.setup.autocast) {
    r.autocast = std::string(kiln::dtype_name(*options.setup.autocast));
    // 16-bit rounding: eager rounds every op's result, compiled kernels keep float values between
    // the ops they fuse; outputs then differ by a few 16-bit ulps (2^-8 each for bfloat16).
    r.tolerance = std::max(r.tolerance, kAutocastTolerance);
  }
  const Progress progress(c, mode, options.quiet);
  try {
    measure(c, mode, options, counter, progress, r);
  } catch (const std::exception& error) {
    r.error = error.what();
    progress.say(fmt::format("failed: {}", error.what()));
  }
  return r;
}

int internal_warm_compile(const Case& c, const std::string& mode, const RunOptions& options) {
  const Step step = c.build(compile_options(mode, options), options.setup);
  const double seconds = seconds_of(options.setup.device, step.compiled);
  fmt::print("{}{:.6f}\n", kWarmPrefix, seconds);
  return 0;
}

std::vector<std::string> warm_compile_arguments(const Case& c, const std::string& mode,
                                                const RunOptions& options) {
  return {"--internal-warm-compile",
          c.workload,
          c.phase,
          "--mode",
          mode,
          "--backend",
          options.backend,
          "--threads",
          std::to_string(options.threads),
          "--shapes",
          options.setup.tiny() ? "tiny" : "full",
          "--device",
          options.setup.on_gpu() ? "cuda" : "cpu",
          "--autocast",
          options.setup.autocast ? std::string(kiln::dtype_name(*options.setup.autocast))
                                 : std::string("none"),
          "--quiet"};
}

}  // namespace kiln_bench
