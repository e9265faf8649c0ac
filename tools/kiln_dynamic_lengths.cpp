// kiln_dynamic_lengths: the per-length view of BENCHMARKS.md's bert-dynamic workload. BERT
// inference over the nine sequence lengths in turn, compiled with the default options (static
// first, then automatic dynamic) and, per length, statically (dynamic=false) for reference:
// compilations and compile time of the first pass, then medians per length of eager, the dynamic
// compilation's second pass and the static one. Issue 8's figures: at most 2 compilations, no
// recompile in the second pass, each length within 1.15x of its static graph.
#include <kiln/kiln.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include "bench/bert_config.h"
#include "bench/capture_counts.h"

namespace {

using kiln::Tensor;
using kiln_bench::Shapes;

double seconds_of(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Median milliseconds of `repeats` calls of each function, interleaved call by call so that
// machine drift affects them alike.
std::vector<double> interleaved_medians(const std::vector<std::function<void()>>& fns,
                                        int repeats) {
  std::vector<std::vector<double>> times(fns.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < fns.size(); ++i) times[i].push_back(seconds_of(fns[i]) * 1e3);
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bert-dynamic per sequence length: eager, dynamic (second pass) and static"};
  std::string shapes_name = "full", json_path;
  int threads = 2, repeats = 5;
  app.add_option("--shapes", shapes_name, "full (BENCHMARKS.md) or tiny")
      ->check(CLI::IsMember({"full", "tiny"}));
  app.add_option("--threads", threads, "kiln's thread count (default 2)");
  app.add_option("--repeats", repeats, "timed calls per length and side (default 5)");
  app.add_option("--json", json_path, "write the rows as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  kiln::set_num_threads(threads);
  const Shapes shapes = shapes_name == "full" ? Shapes::full : Shapes::tiny;
  const std::vector<int64_t> lengths =
      shapes == Shapes::full ? std::vector<int64_t>{16, 40, 64, 100, 128, 200, 256, 384, 512}
                             : std::vector<int64_t>{4, 8, 12};
  const int64_t batch = shapes == Shapes::full ? 2 : 1;
  kiln::autograd::NoGradGuard no_grad;
  kiln::manual_seed(0);
  auto model = kiln::models::bert_for_sequence_classification(kiln_bench::bert_config(shapes));
  model->eval();
  kiln::manual_seed(1);
  std::vector<Tensor> ids;
  for (int64_t n : lengths) {
    ids.push_back(
        kiln::randint(0, kiln_bench::bert_config(shapes).vocab_size, {batch, n}, kiln::kInt64));
  }

  // The dynamic side: default options, the first pass compiles (counted and timed).
  kiln_bench::CaptureCounter counter;
  auto dynamic = kiln::compile(model);
  std::vector<double> first_call_s;
  for (const Tensor& x : ids) first_call_s.push_back(seconds_of([&] { (*dynamic)(x); }));
  const kiln_bench::CaptureCounts first_pass = counter.counts();
  counter.reset();

  nlohmann::json rows = nlohmann::json::array();
  fmt::print("bert-dynamic per length: batch {}, {} threads, medians of {} calls (ms)\n", batch,
             threads, repeats);
  fmt::print("first pass: {} compilations, {} recompiles, {:.1f} s\n", first_pass.graphs,
             first_pass.recompiles, [&] {
               double s = 0;
               for (double t : first_call_s) s += t;
               return s;
             }());
  fmt::print("{:>6} {:>10} {:>10} {:>10} {:>14} {:>14}\n", "length", "eager", "dynamic", "static",
             "dynamic/static", "eager/dynamic");
  size_t second_pass_graphs = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const Tensor& x = ids[i];
    kiln::CompileOptions fixed;
    fixed.dynamic = false;
    auto stat = kiln::compile(model, fixed);
    counter.reset();
    (*dynamic)(x);  // the second pass: must hit the cache
    second_pass_graphs += counter.counts().graphs;
    (*stat)(x);  // compiles the static graph for this length
    const Tensor diff = ((*dynamic)(x)-model->forward(x)).abs().max();
    const std::vector<double> ms = interleaved_medians(
        {[&] { model->forward(x); }, [&] { (*dynamic)(x); }, [&] { (*stat)(x); }}, repeats);
    fmt::print("{:>6} {:>10.2f} {:>10.2f} {:>10.2f} {:>14.3f} {:>14.3f}\n", lengths[i], ms[0],
               ms[1], ms[2], ms[1] / ms[2], ms[0] / ms[1]);
    rows.push_back({{"length", lengths[i]},
                    {"eager_ms", ms[0]},
                    {"dynamic_ms", ms[1]},
                    {"static_ms", ms[2]},
                    {"max_abs_diff", diff.item<float>()},
                    {"first_call_s", first_call_s[i]}});
  }
  fmt::print("second pass: {} compilations\n", second_pass_graphs);
  if (!json_path.empty()) {
    nlohmann::json out = {{"batch", batch},
                          {"threads", threads},
                          {"first_pass_compilations", first_pass.graphs},
                          {"first_pass_recompiles", first_pass.recompiles},
                          {"second_pass_compilations", second_pass_graphs},
                          {"lengths", rows}};
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return second_pass_graphs == 0 ? 0 : 1;
}
