#pragma once
// max-autotune's winners file: which way won the timings at each tuning site of one compiled
// module (autotune.h), on one machine with one number of threads.
//
// Location: <code cache entry folder of the module>/autotune-<threads>-threads.json; the entry
// folder is keyed by the source (code_cache.h), the file name by the thread count, and the file
// records the machine (a hash of host_cpu_description()) and is ignored on another one.
// Format (JSON):
//   {"format": "kiln autotune winners 1", "machine": "<32 hex digits>", "threads": 8,
//    "winners": {"<site>": "<label>", ...}}
// Written like every cache file (a temporary file, fsync, rename): readers see a whole file, old
// or new. A file that does not parse or has another shape is malformed: read_winners says so
// (the caller times again and rewrites it).
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace kiln::inductor {

using Winners = std::map<std::string, std::string>;  // label by site

std::filesystem::path winners_path(const std::filesystem::path& entry_dir, int threads);

// This machine as the winners file records it.
std::string this_machine();

struct WinnersRead {
  std::optional<Winners> winners;        // nullopt: absent, for another machine, or malformed
  std::optional<std::string> malformed;  // why the file is malformed
};
WinnersRead read_winners(const std::filesystem::path& path, const std::string& machine,
                         int threads);

// Replaces the file atomically. Raises kiln::Error naming the path when it cannot be written.
void write_winners(const std::filesystem::path& path, const Winners& winners,
                   const std::string& machine, int threads);

}  // namespace kiln::inductor
