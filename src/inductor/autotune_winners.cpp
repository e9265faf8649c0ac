#include "inductor/autotune_winners.h"

#include "inductor/cache_files.h"
#include "inductor/code_cache.h"
#include "inductor/content_hash.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kiln::inductor {

namespace {

using json = nlohmann::json;

constexpr const char* kFormat = "kiln autotune winners 1";

WinnersRead malformed(std::string why) {
  WinnersRead read;
  read.malformed = std::move(why);
  return read;
}

}  // namespace

std::filesystem::path winners_path(const std::filesystem::path& entry_dir, int threads) {
  return entry_dir / fmt::format("autotune-{}-threads.json", threads);
}

std::string this_machine() { return content_hash(host_cpu_description()); }

WinnersRead read_winners(const std::filesystem::path& path, const std::string& machine,
                         int threads) {
  const std::optional<std::string> text = read_whole_file(path);
  if (!text) return {};
  const json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return malformed("it is not JSON");
  // Each field's type is checked before it is read: json's typed reads throw on another type.
  const auto f = doc.is_object() ? doc.find("format") : doc.end();
  if (!doc.is_object() || f == doc.end() || !f->is_string() || f->get<std::string>() != kFormat) {
    return malformed(fmt::format("it has no \"format\": \"{}\"", kFormat));
  }
  const auto m = doc.find("machine");
  const auto t = doc.find("threads");
  const auto w = doc.find("winners");
  if (m == doc.end() || !m->is_string() || t == doc.end() || !t->is_number_integer() ||
      w == doc.end() || !w->is_object()) {
    return malformed(
        "\"machine\" (a string), \"threads\" (an integer) or \"winners\" (an object) is "
        "missing");
  }
  // Another machine's timings say nothing about this one: not malformed, just not ours.
  if (m->get<std::string>() != machine || t->get<int64_t>() != threads) return {};
  Winners winners;
  for (const auto& [site, label] : w->items()) {
    if (!label.is_string()) return malformed(fmt::format("the winner of {} is no string", site));
    winners.emplace(site, label.get<std::string>());
  }
  WinnersRead read;
  read.winners = std::move(winners);
  return read;
}

void write_winners(const std::filesystem::path& path, const Winners& winners,
                   const std::string& machine, int threads) {
  json doc = {
      {"format", kFormat}, {"machine", machine}, {"threads", threads}, {"winners", json::object()}};
  for (const auto& [site, label] : winners) doc["winners"][site] = label;
  // A CPU entry's folder holds its module already; a CUDA source's winners have a folder of
  // their own (cuda_autotune_entry), made here at the first write.
  create_private_directory(path.parent_path(), "set KILN_CACHE_DIR to a writable folder");
  replace_file(path, doc.dump(2) + "\n");
}

}  // namespace kiln::inductor
