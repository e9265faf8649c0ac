#include "inductor/autotune.h"

#include "inductor/codegen_cuda.h"
#include "inductor/kernel_variants.h"

#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/core/parallel.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace kiln::inductor {

namespace {

std::atomic<size_t> timings{0};

// Timed runs per candidate after one warm-up; fewer once a candidate has run this long.
constexpr int kRuns = 5;
constexpr double kEnoughSeconds = 0.2;
// A candidate replaces the default only when it takes at most this fraction of its time.
constexpr double kClearlyFaster = 0.95;

double median_seconds(const std::function<void()>& run) {
  run();  // warm-up: caches, pages, the OpenMP thread pool
  std::vector<double> seconds;
  double total = 0;
  for (int i = 0; i < kRuns && (i < 2 || total < kEnoughSeconds); ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    total += seconds.back();
  }
  std::nth_element(seconds.begin(),
                   seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2),
                   seconds.end());
  return seconds[seconds.size() / 2];
}

void log_fusion(const AutotuneSettings& settings, const std::string& message) {
  logs::log(logs::Channel::fusion,
            fmt::format("inductor: {}: autotune {}", settings.graph_name, message));
}

}  // namespace

bool is_max_autotune(const std::string& mode) {
  return mode == "max-autotune" || mode == "max-autotune-no-cudagraphs";
}

AutotuneSettings autotune_settings(const BackendContext& context) {
  AutotuneSettings settings;
  settings.enabled = is_max_autotune(context.mode);
  settings.graph_name = context.graph_name;
  if (auto it = context.options.find("autotune_force"); it != context.options.end()) {
    std::vector<std::string> labels = {"default", "extern", "generated"};
    for (const NestVariant& v : autotune_variants()) labels.push_back(v.label);
    for (const std::string& label : cuda_variant_labels()) labels.push_back(label);
    KILN_CHECK(std::find(labels.begin(), labels.end(), it->second) != labels.end(),
               "inductor: options{{\"autotune_force\": \"{}\"}} names no variant; expected one "
               "of {}",
               it->second, fmt::join(labels, ", "));
    settings.force = it->second;
  }
  return settings;
}

Autotuner::Autotuner(AutotuneSettings settings)
    : settings_(std::move(settings)), machine_(this_machine()), threads_(autotune_threads()) {
  if (settings_.force || settings_.cache_entry.empty()) return;
  winners_file_ = winners_path(settings_.cache_entry, threads_);
  WinnersRead read = read_winners(winners_file_, machine_, threads_);
  if (read.malformed) {
    logs::log(logs::Channel::perf_hints,
              fmt::format("inductor: {}: the autotune winners file {} is malformed ({}); timing "
                          "again and rewriting it",
                          settings_.graph_name, winners_file_.string(), *read.malformed));
    rewrite_ = true;
  } else if (read.winners) {
    from_file_ = std::move(*read.winners);
    log_fusion(settings_, fmt::format("winners read from {}", winners_file_.string()));
  }
}

std::optional<size_t> Autotuner::decided(const TuningSite& site) {
  const auto index_of = [&site](const std::string& label) -> std::optional<size_t> {
    const auto it = std::find(site.labels.begin(), site.labels.end(), label);
    if (it == site.labels.end()) return std::nullopt;
    return static_cast<size_t>(it - site.labels.begin());
  };
  if (settings_.force) {
    const size_t chosen = index_of(*settings_.force).value_or(0);
    log_fusion(settings_, fmt::format("{}: {} (forced)", site.key, site.labels[chosen]));
    return chosen;
  }
  if (auto it = chosen_.find(site.key); it != chosen_.end()) return index_of(it->second);
  if (site.labels.size() == 1) return 0;  // nothing to choose
  if (auto it = from_file_.find(site.key); it != from_file_.end()) {
    if (const auto chosen = index_of(it->second)) {
      record(site, *chosen);
      log_fusion(settings_, fmt::format("{}: {} (from the winners file)", site.key, it->second));
      return chosen;
    }
    // A label this site does not have: the file is not about this code.
    logs::log(logs::Channel::perf_hints,
              fmt::format("inductor: {}: the autotune winners file {} is malformed ({} has no "
                          "variant {}); timing again and rewriting it",
                          settings_.graph_name, winners_file_.string(), site.key, it->second));
    from_file_.clear();
    rewrite_ = true;
  }
  return std::nullopt;
}

size_t Autotuner::time(const TuningSite& site, const std::function<void(size_t)>& run) {
  std::vector<double> seconds;
  for (size_t i = 0; i < site.labels.size(); ++i) {
    seconds.push_back(median_seconds([&run, i] { run(i); }));
  }
  size_t chosen =
      static_cast<size_t>(std::min_element(seconds.begin(), seconds.end()) - seconds.begin());
  // Another candidate must beat the default clearly: at a few microseconds the order of nearly
  // equal ones is noise.
  if (seconds[chosen] > kClearlyFaster * seconds[0]) chosen = 0;
  timings.fetch_add(1);
  rewrite_ = true;
  record(site, chosen);
  if (logs::enabled(logs::Channel::fusion)) {
    std::string times;
    for (size_t i = 0; i < seconds.size(); ++i) {
      times += fmt::format("{}{} {:.1f} us", i ? ", " : "", site.labels[i], seconds[i] * 1e6);
    }
    log_fusion(settings_, fmt::format("{}: {} -> {}", site.key, times, site.labels[chosen]));
  }
  return chosen;
}

size_t Autotuner::keep_default(const TuningSite& site, const std::string& why) {
  log_fusion(settings_, fmt::format("{}: {} without timing ({})", site.key, site.labels[0], why));
  chosen_[site.key] = site.labels[0];
  return 0;
}

void Autotuner::record(const TuningSite& site, size_t chosen) {
  chosen_[site.key] = site.labels.at(chosen);
}

void Autotuner::finish() {
  if (settings_.force || winners_file_.empty() || !rewrite_) return;
  // Sites of the file this run did not meet (the same source compiled into another program)
  // are kept.
  Winners winners = from_file_;
  for (const auto& [site, label] : chosen_) winners[site] = label;
  try {
    write_winners(winners_file_, winners, machine_, threads_);
    log_fusion(settings_, fmt::format("winners written to {}", winners_file_.string()));
  } catch (const Error& e) {
    // The timings are still used in this process; only their reuse is lost.
    logs::log(logs::Channel::perf_hints, fmt::format("inductor: {}: autotune winners not kept: {}",
                                                     settings_.graph_name, e.what()));
  }
}

size_t autotune_timings() { return timings.load(); }

int autotune_threads() { return get_num_threads(); }

}  // namespace kiln::inductor
