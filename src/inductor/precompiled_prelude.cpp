#include "inductor/precompiled_prelude.h"

#include "inductor/cache_files.h"
#include "inductor/code_cache.h"

#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace kiln::inductor {
namespace {

namespace fs = std::filesystem;

// Whether the folder holds `prelude` and a compiled form matching its ok record (a mismatch is
// logged when `log_mismatch`).
bool complete(const fs::path& header, const fs::path& compiled, const fs::path& ok,
              std::string_view prelude, bool log_mismatch) {
  const std::optional<std::string> record = read_whole_file(ok);
  if (!record) return false;
  const std::optional<std::string> text = read_whole_file(header);
  const std::optional<std::string> bytes = read_whole_file(compiled);
  if (text && *text == prelude && bytes && ok_record(*bytes) == *record) return true;
  if (!log_mismatch) return false;
  logs::log(logs::Channel::perf_hints,
            fmt::format("precompiled prelude {} does not match its ok record; rebuilding it",
                        compiled.string()));
  return false;
}

// A built prelude: the header, its compiled form and that form's size when checked.
struct Built {
  fs::path header, compiled;
  uintmax_t size = 0;
};

// `key`: the prelude's cache key.
Built build(const std::string& key, std::string_view prelude, const CompilerConfig& config,
            const std::vector<std::string>& extra_args) {
  const fs::path dir = cache_dir() / "cpp" / "prelude" / key;
  create_private_directory(dir.parent_path(), kCacheDirHint);
  create_private_directory(dir, kCacheDirHint);
  const bool clang = compiler_identity(config).find("clang") != std::string::npos;
  const fs::path header = dir / "kiln_prelude.h";
  const fs::path compiled = dir / (clang ? "kiln_prelude.h.pch" : "kiln_prelude.h.gch");
  const fs::path ok = dir / "ok";
  const auto built = [&] {
    std::error_code ec;
    const uintmax_t size = fs::file_size(compiled, ec);
    return Built{header, compiled, ec ? 0 : size};
  };
  {
    FolderLock lock(dir, FolderLock::Mode::shared);
    if (complete(header, compiled, ok, prelude, true)) return built();
  }
  // Built beside the header under a temporary name (the compiler writes it whole), then published
  // with its record; the header itself is only ever replaced by the same text.
  FolderLock lock(dir, FolderLock::Mode::exclusive);
  // Another process may have built it meanwhile.
  if (complete(header, compiled, ok, prelude, false)) return built();
  remove_stale_temporaries(dir, std::chrono::seconds(3600));
  if (read_whole_file(header) != std::optional<std::string>(std::string(prelude))) {
    replace_file(header, prelude);
  }
  TemporaryFiles unpublished;
  const fs::path temporary = unpublished.add(unique_temporary_name(compiled));
  logs::log(logs::Channel::compile_progress,
            "precompiling the kernels' prelude (once per code cache and compiler)");
  compile_precompiled_header(config, header, temporary, extra_args);
  publish_with_record(temporary, compiled, ok);
  return built();
}

}  // namespace

std::optional<fs::path> precompiled_prelude(std::string_view prelude, const CompilerConfig& config,
                                            const std::vector<std::string>& extra_args) {
  // Checked whole once per process and configuration; later modules check its size only (a
  // file truncated meanwhile is rebuilt).
  static std::mutex mutex;
  static std::map<std::string, std::optional<Built>> built;  // by cache folder and key
  const std::string key =
      cache_key(std::string("precompiled prelude\n") + std::string(prelude), config, extra_args);
  const std::string id = (cache_dir() / key).string();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = built.find(id); it != built.end()) {
    if (!it->second) return std::nullopt;
    std::error_code ec;
    if (fs::file_size(it->second->compiled, ec) == it->second->size && !ec) {
      return it->second->header;
    }
  }
  std::optional<Built> made;
  try {
    made = build(key, prelude, config, extra_args);
  } catch (const Error& error) {
    logs::log(logs::Channel::perf_hints,
              fmt::format("the generated code's prelude could not be precompiled; each module "
                          "compiles it: {}",
                          error.what()));
  }
  built[id] = made;
  if (!made) return std::nullopt;
  return made->header;
}

}  // namespace kiln::inductor
