// kiln_fuzz: the differential graph fuzzer (docs/RELIABILITY.md). Generates random valid
// programs over the op registry, runs each in eager and compiled (every backend, shape mode and
// compile mode asked for, forward and backward), and on a mismatch or a compiler error shrinks
// the program and writes a standalone GoogleTest reproducer. With --isolate each program runs in
// a child process, so that a crash or a hang is a finding too (shrunk the same way).
//
//   kiln_fuzz --seed 1 --count 200 --max-ops 20 --out-dir fuzz-out
//   kiln_fuzz --replay 1234 --max-ops 20 --backends inductor --shapes dynamic
//
// A program is a function of its seed and --max-ops.
//
// Exit status: 0 when every program passed everywhere; 1 on findings or on a program eager
// rejected (a generator bug); 2 on a usage error.
#include "fuzz/generator.h"
#include "fuzz/isolation.h"
#include "fuzz/reproducer.h"
#include "fuzz/runner.h"
#include "fuzz/shrinker.h"

#include <kiln/kiln.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

namespace {

using kiln::fuzz::Outcome;
using kiln::fuzz::Program;
using kiln::fuzz::RunConfig;

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Finding {
  uint64_t seed;
  Outcome outcome;
  size_t nodes_before = 0, nodes_after = 0;
  std::string reproducer;  // path, when written
};

// Whether `candidate` fails under `config` as `original` did (and eager accepts it); in a child
// process when `isolation` is given.
bool fails_like(const Program& candidate, const Outcome& original,
                const std::optional<kiln::fuzz::IsolationOptions>& isolation) {
  const kiln::fuzz::ProgramResult r =
      isolation ? kiln::fuzz::run_program_isolated(candidate, {original.config}, *isolation)
                : kiln::fuzz::run_program(candidate, {original.config});
  return !r.eager_rejected && !r.outcomes.empty() &&
         r.outcomes[0].signature() == original.signature();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln_fuzz: differential fuzzing of kiln::compile against eager"};
  uint64_t seed = 1;
  int count = 50;
  kiln::fuzz::GeneratorOptions gen;
  std::string backends = "eager,aot_eager,inductor";
  std::string shapes = "static,dynamic,mark_dynamic";
  std::string modes = "default";
  double time_limit = 0;
  std::string out_dir;
  std::optional<uint64_t> replay;
  bool shrink = true;
  bool verbose = false;
  bool isolate = false;
  int timeout_s = 300;
  int max_shrink_attempts = 300;
  app.add_option("--seed", seed, "the first program's seed; program i has seed + i");
  app.add_option("--count", count, "how many programs");
  app.add_option("--max-ops", gen.max_ops, "at most this many ops per program (at least 1)");
  app.add_option("--backends", backends, "comma list of backends");
  app.add_option("--shapes", shapes, "comma list of static, dynamic, mark_dynamic");
  app.add_option("--modes", modes, "comma list of compile modes (default, reduce-overhead, ...)");
  app.add_option("--time-limit", time_limit, "stop starting programs after this many seconds");
  app.add_option("--out-dir", out_dir, "write each finding's shrunk reproducer (a .cpp) here");
  app.add_option("--replay", replay, "run the program of this one seed, printing it");
  app.add_flag("!--no-shrink", shrink, "write findings' reproducers unshrunk");
  app.add_option("--max-shrink-attempts", max_shrink_attempts, "predicate calls per shrink");
  app.add_flag("--isolate", isolate,
               "run each program (and each shrinking step) in a child process, so that a crash "
               "or a hang is a finding");
  app.add_option("--timeout", timeout_s,
                 "with --isolate: seconds before a program's process is killed as hung");
  app.add_flag("-v,--verbose", verbose, "print each program's seed and outcome");
  CLI11_PARSE(app, argc, argv);
  if (gen.max_ops < 1) gen.max_ops = 1;

  std::vector<RunConfig> configs;
  try {
    configs = kiln::fuzz::configs_of(split(backends), split(shapes), split(modes));
  } catch (const kiln::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  // Compile warnings (a function falling back to eager past the cache limit) are not findings.
  kiln::set_warning_handler([verbose](std::string_view w) {
    if (verbose) std::cerr << "kiln: warning: " << w << "\n";
  });
  if (replay) {
    seed = *replay;
    count = 1;
    verbose = true;
  }
  if (!out_dir.empty()) std::filesystem::create_directories(out_dir);
  // This process only generates programs and forks: its children may use every thread.
  std::optional<kiln::fuzz::IsolationOptions> isolation;
  if (isolate) isolation = kiln::fuzz::IsolationOptions{.timeout_s = timeout_s};

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::map<std::string, std::pair<int, int>> per_config;  // name -> (passed, failed)
  std::vector<Finding> findings;
  std::vector<std::pair<uint64_t, std::string>> rejected;
  int programs = 0;
  size_t ops = 0;
  for (int i = 0; i < count; ++i) {
    if (time_limit > 0 && elapsed() > time_limit) break;
    const uint64_t program_seed = seed + static_cast<uint64_t>(i);
    if (verbose) std::cerr << "seed " << program_seed << std::flush;
    Program program;
    try {
      program = kiln::fuzz::generate(program_seed, gen);
    } catch (const kiln::Error& e) {
      rejected.emplace_back(program_seed, e.what());
      if (verbose) std::cerr << ": generator error\n" << e.what() << "\n";
      continue;
    }
    if (replay) std::cerr << "\n" << program.str();
    ++programs;
    ops += program.nodes.size();
    const kiln::fuzz::ProgramResult result =
        isolation ? kiln::fuzz::run_program_isolated(program, configs, *isolation)
                  : kiln::fuzz::run_program(program, configs);
    if (result.eager_rejected) {
      rejected.emplace_back(program_seed, result.eager_detail);
      if (verbose) std::cerr << ": eager rejected it: " << result.eager_detail << "\n";
      continue;
    }
    const Outcome* first_failure = nullptr;
    for (const Outcome& o : result.outcomes) {
      auto& [passed, failed] = per_config[o.config.name()];
      if (o.status == Outcome::Status::Pass) ++passed;
      if (o.failed()) {
        ++failed;
        if (first_failure == nullptr) first_failure = &o;
        findings.push_back({program_seed, o, program.nodes.size(), program.nodes.size(), ""});
      }
    }
    if (verbose) {
      std::cerr << ": " << program.nodes.size() << " ops, "
                << (first_failure ? "FAILED " + first_failure->config.name() : "ok") << "\n";
    }
    // The first failure of a program gets a reproducer (the others are often the same bug).
    if (first_failure != nullptr && !out_dir.empty()) {
      Finding& f = *std::find_if(findings.begin(), findings.end(), [&](const Finding& x) {
        return x.seed == program_seed && x.outcome.config.name() == first_failure->config.name();
      });
      Program small = program;
      if (shrink) {
        small = kiln::fuzz::shrink(
                    program, [&](const Program& p) { return fails_like(p, f.outcome, isolation); },
                    max_shrink_attempts)
                    .program;
      }
      f.nodes_after = small.nodes.size();
      const std::string name = kiln::fuzz::reproducer_test_name(program, f.outcome.config);
      f.reproducer = (std::filesystem::path(out_dir) / ("fuzz_" + name + ".cpp")).string();
      std::ofstream(f.reproducer) << kiln::fuzz::reproducer_cpp(
          small, f.outcome.config, name, f.outcome.signature() + "\n" + f.outcome.detail);
    }
  }

  std::cout << fmt::format("kiln_fuzz: {} programs (seeds {}..{}), {} ops, {:.1f} s\n", programs,
                           seed, seed + static_cast<uint64_t>(std::max(count, 1)) - 1, ops,
                           elapsed());
  for (const auto& [name, counts] : per_config) {
    std::cout << fmt::format("  {:<36} {:>5} passed {:>4} failed\n", name, counts.first,
                             counts.second);
  }
  for (const auto& [s, why] : rejected) {
    std::cout << fmt::format("generator error, seed {}: {}\n", s, why.substr(0, why.find('\n')));
  }
  std::cout << findings.size() << " findings\n";
  for (const Finding& f : findings) {
    std::string detail = f.outcome.detail.substr(0, f.outcome.detail.find('\n'));
    if (detail.size() > 300) detail = detail.substr(0, 300) + "...";
    std::cout << fmt::format("  seed {} {}: {}\n", f.seed, f.outcome.config.name(), detail);
    // The program depends on --max-ops too.
    std::cout << fmt::format(
        "    replay: kiln_fuzz --replay {} --max-ops {} --backends {} --modes {}\n", f.seed,
        gen.max_ops, f.outcome.config.backend, f.outcome.config.mode);
    if (!f.reproducer.empty()) {
      std::cout << fmt::format("    reproducer ({} of {} ops): {}\n", f.nodes_after, f.nodes_before,
                               f.reproducer);
    }
  }
  return findings.empty() && rejected.empty() ? 0 : 1;
}
