#include "report.h"

#include <fmt/format.h>
#include <kiln/core/error.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

namespace kiln_bench {
namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  if (!value) return nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*value)) return nullptr;  // JSON has no NaN or infinity
  }
  return *value;
}

std::string cell(const std::optional<double>& value, const char* format = "{:.4g}") {
  return value ? fmt::format(fmt::runtime(format), *value) : "-";
}
std::string cell(const std::optional<size_t>& value) {
  return value ? std::to_string(*value) : "-";
}

// What the table's last column says beside the figures.
// The table's short name of an autocast dtype: "bf16", "fp16".
std::string short_dtype(const std::string& dtype) {
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float16") return "fp16";
  return dtype;
}

std::string note(const Result& r) {
  if (r.error) return "error: " + r.error->substr(0, r.error->find('\n'));
  std::string text = r.note.value_or("");
  const auto add = [&text](const std::string& more) { text += (text.empty() ? "" : "; ") + more; };
  if (r.second_pass_ms) {
    add(fmt::format("2nd pass {:.4g} ms, {} recompiles", *r.second_pass_ms,
                    r.recompiles_second_pass.value_or(0)));
  }
  if (r.overhead_us) add(fmt::format("overhead {:.3g} us/call", *r.overhead_us));
  if (!r.matches()) add(fmt::format("MISMATCH (tolerance {:.0e})", r.tolerance));
  return text;
}

// What the whole run's figures need said once, beside the table and in the JSON.
std::vector<std::string> run_notes(const std::vector<Result>& results) {
  std::vector<std::string> notes;
  if (std::any_of(results.begin(), results.end(),
                  [](const Result& r) { return r.device == "cuda"; })) {
    notes.push_back(
        "peak_mb on cuda: the caching allocator's high-water mark of memory held by tensors "
        "above what was held before the batch (sizes as the cache rounds them)");
  }
  return notes;
}

}  // namespace

void print_table(const std::vector<Result>& results, const Machine& machine, std::FILE* out) {
  fmt::print(out, "kiln {} on {}{} ({} logical CPUs, {} threads, load {:.2f}), {}\n",
             machine.kiln_commit, machine.gpu ? *machine.gpu + " with " : "", machine.cpu,
             machine.cores, machine.threads, machine.load_average, machine.date);
  const auto row = [out](auto&&... cells) {
    fmt::print(
        out,
        "{:<13} {:<14} {:<15} {:>9} {:>9} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>8} {:>9}  {}\n",
        cells...);
  };
  row("workload", "phase", "mode", "eager ms", "comp ms", "speedup", "cold s", "warm s", "graphs",
      "breaks", "recomp", "peak MB", "rel err", "");
  for (const Result& r : results) {
    row(r.workload, r.autocast ? r.phase + " " + short_dtype(*r.autocast) : r.phase,
        r.mode.value_or("-"), cell(r.eager_ms), cell(r.compiled_ms), cell(r.speedup, "{:.2f}x"),
        cell(r.compile_s_cold, "{:.3g}"), cell(r.compile_s_warm, "{:.3g}"), cell(r.graphs),
        cell(r.graph_breaks), cell(r.recompiles), cell(r.peak_mb, "{:.1f}"),
        cell(r.max_rel_err, "{:.1e}"), note(r));
  }
  for (const std::string& line : run_notes(results)) fmt::print(out, "note: {}\n", line);
}

void write_json(const std::vector<Result>& results, const Machine& machine,
                const std::string& path) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Result& r : results) {
    rows.push_back({{"workload", r.workload},
                    {"device", r.device},
                    {"phase", r.phase},
                    {"mode", or_null(r.mode)},
                    {"autocast", or_null(r.autocast)},
                    {"eager_ms", or_null(r.eager_ms)},
                    {"compiled_ms", or_null(r.compiled_ms)},
                    {"speedup", or_null(r.speedup)},
                    {"compile_s_cold", or_null(r.compile_s_cold)},
                    {"compile_s_warm", or_null(r.compile_s_warm)},
                    {"graphs", or_null(r.graphs)},
                    {"graph_breaks", or_null(r.graph_breaks)},
                    {"recompiles", or_null(r.recompiles)},
                    {"peak_mb", or_null(r.peak_mb)},
                    {"max_rel_err", or_null(r.max_rel_err)},
                    {"recompiles_second_pass", or_null(r.recompiles_second_pass)},
                    {"second_pass_ms", or_null(r.second_pass_ms)},
                    {"eager_peak_mb", or_null(r.eager_peak_mb)},
                    {"overhead_us", or_null(r.overhead_us)},
                    {"tolerance", r.tolerance},
                    {"matches", r.matches()},
                    {"error", or_null(r.error)},
                    {"note", or_null(r.note)}});
  }
  nlohmann::json doc = {{"machine",
                         {{"cpu", machine.cpu},
                          {"cores", machine.cores},
                          {"threads", machine.threads},
                          {"gpu", or_null(machine.gpu)},
                          {"date", machine.date},
                          {"kiln_commit", machine.kiln_commit},
                          {"load_average", machine.load_average}}},
                        {"results", rows}};
  if (const std::vector<std::string> notes = run_notes(results); !notes.empty()) {
    doc["notes"] = notes;
  }
  std::ofstream file(path);
  file << doc.dump(2) << "\n";
  KILN_CHECK(file.good(), "cannot write {}", path);
}

}  // namespace kiln_bench
