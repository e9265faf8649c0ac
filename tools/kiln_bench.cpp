// kiln_bench: the benchmark suite of BENCHMARKS.md (../shared/BENCHMARKS.md in the project
// workspace). For each workload and phase it times eager kiln and kiln::compile'd kiln
// interleaved, and reports speedup, cold and warm compile times, graphs, graph breaks,
// recompiles, peak memory and the compiled-vs-eager error, as a table (stdout), JSON and a chart.
//
//   kiln_bench                                   all CPU workloads, inductor, mode default
//   kiln_bench --workload mlp,bert --mode default,max-autotune --json out.json --plot out.png
//   kiln_bench --shapes tiny --iters 1 --repeats 1 --quiet   the CI smoke run
//   kiln_bench --device cuda --json gpu.json     every workload with a GPU shape, on the GPU
//
// Exit status: 0 when every compiled result matched eager within its workload's tolerance, 1 when
// one did not (or failed), 2 on a usage error.
#include <fmt/format.h>
#include <kiln/cuda/cuda.h>
#include <kiln/kiln.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/case.h"
#include "bench/child_process.h"
#include "bench/machine.h"
#include "bench/report.h"
#include "bench/run_case.h"
#include "bench/temp_dir.h"

namespace {

using namespace kiln_bench;

// The modes CompileOptions documents; a backend ignores those it has no use for.
const std::vector<std::string> kModes = {"default", "reduce-overhead", "max-autotune",
                                         "max-autotune-no-cudagraphs"};
const std::vector<std::string> kPhases = {"inference", "train"};

struct Arguments {
  std::vector<std::string> workloads, modes = {"default"}, phases = kPhases;
  std::string device = "cpu", backend = "inductor", shapes = "full", autocast = "none";
  int threads = 2, repeats = 5;
  std::optional<int> iters;
  double min_time = 0.5;
  std::string json, plot;
  bool quiet = false;
  bool cudnn_legacy = false;
  std::vector<std::string> skip;                   // "workload:phase" cases left out
  std::vector<std::string> internal_warm_compile;  // workload, phase
};

std::vector<std::string> workload_ids(const std::vector<Case>& cases) {
  std::vector<std::string> ids;
  for (const Case& c : cases) {
    if (std::find(ids.begin(), ids.end(), c.workload) == ids.end()) ids.push_back(c.workload);
  }
  return ids;
}

// Throws CLI::ValidationError naming the valid values when `values` has one outside `valid`.
void check_values(const std::string& option, const std::vector<std::string>& values,
                  const std::vector<std::string>& valid) {
  for (const std::string& v : values) {
    if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
      throw CLI::ValidationError(
          option, fmt::format("unknown value '{}'; valid: {}", v, fmt::join(valid, ", ")));
    }
  }
}

kiln::Device device(const Arguments& args) {
  return args.device == "cuda" ? kiln::Device::cuda() : kiln::kCPU;
}

RunOptions run_options(const Arguments& args) {
  RunOptions o;
  o.setup = {.shapes = args.shapes == "tiny" ? Shapes::tiny : Shapes::full, .device = device(args)};
  if (args.autocast != "none") {
    o.setup.autocast = args.autocast == "float16" ? kiln::DType::Float16 : kiln::DType::BFloat16;
  }
  o.backend = args.backend;
  o.threads = args.threads;
  o.timing = {.iters = args.iters, .min_time_s = args.min_time, .repeats = args.repeats};
  o.quiet = args.quiet;
  return o;
}

const Case* find_case(const std::vector<Case>& cases, const std::string& workload,
                      const std::string& phase) {
  for (const Case& c : cases) {
    if (c.workload == workload && c.phase == phase) return &c;
  }
  return nullptr;
}

// Draws the chart with tools/bench/plot_speedups.py from the JSON. Debian's own python3 first:
// python3-matplotlib is installed for it, whatever python3 comes first on PATH.
void plot(const std::string& json_path, const std::string& png_path) {
  std::vector<std::string> argv = {"/usr/bin/env", "python3"};
  if (std::filesystem::exists("/usr/bin/python3")) argv = {"/usr/bin/python3"};
  for (const std::string& arg : {std::string(KILN_BENCH_PLOT_SCRIPT), json_path, png_path}) {
    argv.push_back(arg);
  }
  ChildOutput python = run_child(argv);
  if (python.exit_status != 0) {
    fmt::print(stderr,
               "kiln_bench: drawing {} failed (status {}); it needs python3 with matplotlib "
               "(Debian: apt-get install python3-matplotlib)\n",
               png_path, python.exit_status);
    return;
  }
  fmt::print("chart: {}\n", png_path);
}

int run_suite(const Arguments& args, const std::vector<Case>& cases) {
  const RunOptions options = run_options(args);
  const Machine machine = describe_machine(args.threads, options.setup.device);
  CaptureCounter counter;
  std::vector<Result> results;
  for (const std::string& workload : args.workloads) {
    for (const std::string& phase : args.phases) {
      const Case* c = find_case(cases, workload, phase);
      if (c == nullptr) continue;  // e.g. gpt2 has no training phase
      if (options.setup.on_gpu() && !c->runs_on_gpu) {
        if (!args.quiet) {
          fmt::print(stderr, "kiln_bench: {} has no GPU shape in BENCHMARKS.md: skipped on cuda\n",
                     workload);
        }
        continue;
      }
      if (options.setup.autocast && !c->autocasts) {
        if (!args.quiet) {
          fmt::print(stderr, "kiln_bench: {} runs no model under autocast: skipped\n", workload);
        }
        continue;
      }
      const std::string id = workload + ":" + phase;
      if (std::find(args.skip.begin(), args.skip.end(), id) != args.skip.end()) continue;
      for (const std::string& mode : args.modes) {
        results.push_back(run_case(*c, mode, options, counter));
      }
    }
  }
  print_table(results, machine, stdout);
  std::fflush(stdout);

  std::optional<TempDir> scratch;
  std::string json_path = args.json;
  if (json_path.empty() && !args.plot.empty()) {
    scratch.emplace("kiln-bench-json");
    json_path = (scratch->path() / "results.json").string();
  }
  if (!json_path.empty()) write_json(results, machine, json_path);
  if (!args.json.empty()) fmt::print("json: {}\n", args.json);
  if (!args.plot.empty()) plot(json_path, args.plot);

  const auto mismatched =
      std::count_if(results.begin(), results.end(), [](const Result& r) { return !r.matches(); });
  if (mismatched > 0) {
    fmt::print(stderr, "kiln_bench: {} of {} rows failed or did not match eager\n", mismatched,
               results.size());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Case> cases = all_cases();
  const std::vector<std::string> ids = workload_ids(cases);
  Arguments args;
  args.workloads = ids;

  CLI::App app{"kiln_bench: eager vs compiled kiln on the workloads of BENCHMARKS.md"};
  app.footer(
      "Prints the table on stdout, progress on stderr. Exit status: 0 when every compiled result "
      "matched eager within its workload's tolerance, 1 when one did not or failed, 2 on a usage "
      "error.");
  // A later value overrides an earlier one (scripts/run.sh passes defaults before the user's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--workload", args.workloads, "comma-separated workloads (default: all)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check([&](const std::string& v) {
        return std::find(ids.begin(), ids.end(), v) != ids.end()
                   ? std::string()
                   : fmt::format("unknown workload '{}'; valid: {}", v, fmt::join(ids, ", "));
      });
  app.add_option("--phase", args.phases, "inference,train (default: both where they exist)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--skip", args.skip, "comma-separated WORKLOAD:PHASE cases to leave out")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--device", args.device,
                 "cpu (default) or cuda (the first GPU, at BENCHMARKS.md's GPU shapes)");
  app.add_option("--mode", args.modes, "comma-separated compile modes (default: default)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--backend", args.backend,
                 "compile backend: inductor (default); eager or aot_eager for diagnosis");
  app.add_option("--threads", args.threads, "kiln's thread count (default 2)")
      ->check(CLI::PositiveNumber);
  app.add_option("--iters", args.iters, "iterations per timed batch (default: --min-time)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", args.min_time, "seconds per timed batch (default 0.5)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--repeats", args.repeats, "timed batches per side, medians (default 5)")
      ->check(CLI::PositiveNumber);
  app.add_option("--json", args.json, "write the results as JSON to this file");
  app.add_option("--plot", args.plot, "draw a PNG bar chart of speedups to this file");
  app.add_option("--shapes", args.shapes, "full (BENCHMARKS.md) or tiny (smoke runs)")
      ->check(CLI::IsMember({"full", "tiny"}));
  app.add_option("--autocast", args.autocast,
                 "none (default), bfloat16 or float16: the model workloads' forward passes under "
                 "kiln::autocast (as torch.autocast), the others skipped")
      ->check(CLI::IsMember({"none", "bfloat16", "float16"}));
  app.add_flag("--quiet", args.quiet, "no progress on stderr");
  app.add_flag("--cudnn-legacy", args.cudnn_legacy,
               "GPU convolutions through cuDNN's legacy API only (default: its graph API)");
  app.add_option("--internal-warm-compile", args.internal_warm_compile,
                 "(internal) time the first compiled call of WORKLOAD PHASE and exit")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("");
  try {
    app.parse(argc, argv);
    check_values("--mode", args.modes, kModes);
    check_values("--phase", args.phases, kPhases);
    std::vector<std::string> case_ids;
    for (const Case& c : cases) case_ids.push_back(c.workload + ":" + c.phase);
    check_values("--skip", args.skip, case_ids);
    check_values("--backend", {args.backend}, kiln::list_backends());
    check_values("--device", {args.device}, {"cpu", "cuda"});
    if (args.device == "cuda" && !kiln::cuda::is_available()) {
      throw CLI::ValidationError("--device",
                                 "cuda: no usable CUDA device here (kiln was built without CUDA, "
                                 "or no GPU or driver is visible); use --device cpu");
    }
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;  // --help succeeds
  }

  kiln::set_num_threads(args.threads);
  // Like for like with bench/compare_torch_cuda.py's PyTorch: float32 without TF32 (matmul's is
  // off by default), cuDNN timing its algorithms per problem.
  kiln::cuda::set_cudnn_allow_tf32(false);
  kiln::cuda::set_cudnn_benchmark(true);
  kiln::cuda::set_cudnn_graph_api(!args.cudnn_legacy);
  try {
    if (!args.internal_warm_compile.empty()) {
      const Case* c =
          find_case(cases, args.internal_warm_compile[0], args.internal_warm_compile[1]);
      KILN_CHECK(c != nullptr, "no case {} {}", args.internal_warm_compile[0],
                 args.internal_warm_compile[1]);
      // Logging as the cold compile does (the counter turns capture's channels on), so that the
      // two times differ only by the cache.
      const CaptureCounter counter;
      return internal_warm_compile(*c, args.modes.front(), run_options(args));
    }
    return run_suite(args, cases);
  } catch (const std::exception& error) {
    fmt::print(stderr, "kiln_bench: {}\n", error.what());
    return 1;
  }
}
