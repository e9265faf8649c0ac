// The inductor's on-disk code cache (see code_cache.h for its layout and safety protocol).
#include "inductor/code_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "inductor/cache_files.h"
#include "inductor/precompiled_prelude.h"

namespace kiln::inductor {
namespace {

namespace fs = std::filesystem;

// Older temporary files in an entry folder are leftovers of a crashed compilation.
constexpr std::chrono::seconds kStaleTemporaryAge{3600};

std::atomic<size_t> compilations{0};
std::atomic<size_t> compiler_processes{0};

const char* nonempty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// A folder in the shared /tmp must be ours: another user could have created it (or a symlink to
// theirs) to have us load their code.
void check_owned_by_this_user(const fs::path& dir) {
  struct stat info {};
  KILN_CHECK(
      ::lstat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid(),
      "kiln's code cache folder {} is not a folder owned by this user; {}", dir.string(),
      kCacheDirHint);
}

}  // namespace

// What describes the host CPU in /proc/cpuinfo (x86 and ARM field names), for flags that compile
// for the host: a cache shared between machines must not hand one CPU's code to another.
const std::string& host_cpu_description() {
  static const std::string description = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string text;
    // The first processor's block is enough: the others are the same CPU model.
    for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {
      for (std::string_view field : {"vendor_id", "model name", "flags", "CPU implementer",
                                     "CPU architecture", "CPU variant", "CPU part", "Features"}) {
        if (line.starts_with(field)) text += line + "\n";
      }
    }
    return text;
  }();
  return description;
}

namespace {

bool compiles_for_host(const CompilerConfig& config) {
  for (const std::string& flag : config.flags) {
    if (flag.find("=native") != std::string::npos) return true;
  }
  return false;
}

// In-process state of one key: its lock serializes compilations of the key (not of others), and
// the module stays shared while anyone uses it.
struct KeySlot {
  std::mutex mutex;
  std::weak_ptr<const LoadedModule> module;
};

std::shared_ptr<KeySlot> slot_for(const std::string& key) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<KeySlot>> slots;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<KeySlot>& slot = slots[key];
  if (!slot) slot = std::make_shared<KeySlot>();
  return slot;
}

// The files of one cache entry.
struct EntryFiles {
  explicit EntryFiles(fs::path folder)
      : dir(std::move(folder)),
        source(dir / "source.cpp"),
        module(dir / "module.so"),
        ok(dir / "ok") {}
  fs::path dir, source, module, ok;
};

// Why module.so does not match ok; nullopt when it does.
std::optional<std::string> mismatch(const EntryFiles& entry, const std::string& ok) {
  std::optional<std::string> bytes = read_whole_file(entry.module);
  if (!bytes) return "module.so is missing or unreadable";
  std::istringstream record(ok);
  size_t size = 0;
  std::string hash;
  if (!(record >> size >> hash)) return "its ok file is malformed";
  if (bytes->size() != size) {
    return fmt::format("module.so has {} bytes where ok records {}", bytes->size(), size);
  }
  if (content_hash(*bytes) != hash) return "module.so's content hash differs from ok's";
  return std::nullopt;
}

void log_rebuild(const EntryFiles& entry, std::string_view what, std::string_view problem) {
  logs::log(logs::Channel::perf_hints,
            fmt::format("code cache entry {} for {} is broken ({}); rebuilding it",
                        entry.dir.string(), what, problem));
}

// The entry's module if the entry is complete and valid; nullptr if it was never completed (a
// plain miss) or is broken (logged).
std::shared_ptr<const LoadedModule> load_entry(const EntryFiles& entry, std::string_view what) {
  FolderLock lock(entry.dir, FolderLock::Mode::shared);
  std::optional<std::string> ok = read_whole_file(entry.ok);
  if (!ok) return nullptr;
  if (std::optional<std::string> problem = mismatch(entry, *ok)) {
    log_rebuild(entry, what, *problem);
    return nullptr;
  }
  try {
    return std::make_shared<const LoadedModule>(LoadedModule::open(entry.module));
  } catch (const Error& error) {
    log_rebuild(entry, what, error.what());
    return nullptr;
  }
}

// Writes `content` to `path` unless the file already holds it (another compilation of the key).
void write_unless_identical(const fs::path& path, std::string_view content) {
  std::optional<std::string> kept = read_whole_file(path);
  if (!kept || *kept != content) replace_file(path, content);
}

// `config` compiling with `prelude_header` included first, when given.
CompilerConfig including(const CompilerConfig& config,
                         const std::optional<fs::path>& prelude_header) {
  CompilerConfig compiling = config;
  if (prelude_header) {
    compiling.flags.insert(compiling.flags.end(), {"-include", prelude_header->string()});
  }
  return compiling;
}

// The compile_progress record of `what` with `compiled` of its `total` kernels compiled.
void log_progress(std::string_view what, size_t compiled, size_t total) {
  logs::log(logs::Channel::compile_progress,
            fmt::format("{}: {} of {} kernels compiled", what, compiled, total));
}

// Compiles `source` in `parts` translation units at once, linked into `output`. The parts' sources
// stay in the entry folder under names that only they use (source.part<i>of<N><suffix>.cpp: the
// same content whoever writes them); the objects are temporary files. With `prelude_header` the
// parts carry the kernels alone and include the precompiled prelude.
void compile_in_parts(const EntryFiles& entry, const KernelSource& source, size_t parts,
                      const CompilerConfig& config, const std::vector<std::string>& extra_args,
                      const fs::path& output, const std::optional<fs::path>& prelude_header,
                      std::string_view what) {
  KernelSource kernels_only = source;
  if (prelude_header) kernels_only.prelude.clear();
  std::vector<size_t> functions_per_part;
  const std::vector<std::string> texts = split_into_parts(kernels_only, parts, &functions_per_part);
  const std::string suffix = prelude_header ? ".kernels" : "";
  TemporaryFiles objects;
  std::vector<ObjectCompilation> units;
  std::vector<fs::path> object_paths;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string name = fmt::format("part{}of{}", i + 1, texts.size());
    fs::path part_source = entry.dir / fmt::format("source.{}{}.cpp", name, suffix);
    write_unless_identical(part_source, texts[i]);
    object_paths.push_back(objects.add(unique_temporary_name(entry.dir / (name + ".o"))));
    units.push_back({std::move(part_source), object_paths.back()});
  }
  compiler_processes.fetch_add(units.size());
  size_t compiled = 0;
  compile_objects(including(config, prelude_header), units, extra_args, [&](size_t unit) {
    compiled += functions_per_part[unit];
    log_progress(what, compiled, source.functions.size());
  });
  compiler_processes.fetch_add(1);
  link_shared_object(config, object_paths, output, extra_args);
}

// Compiles the entry's source into `output`: whole (source.cpp) or in parts, its prelude from
// `prelude_header` (precompiled) when given.
void compile_entry(const EntryFiles& entry, const KernelSource& source, size_t parts,
                   const CompilerConfig& config, const std::vector<std::string>& extra_args,
                   const fs::path& output, const std::optional<fs::path>& prelude_header,
                   std::string_view what) {
  if (parts > 1) {
    logs::log(logs::Channel::output_code,
              fmt::format("code cache: compiling {} ({} kernels) as {} translation units at "
                          "once, then linking",
                          what, source.functions.size(), parts));
    compile_in_parts(entry, source, parts, config, extra_args, output, prelude_header, what);
    return;
  }
  compiler_processes.fetch_add(1);
  log_progress(what, 0, source.functions.size());
  if (!prelude_header) {
    compile_shared_object(config, entry.source, output, extra_args);
  } else {
    const fs::path kernels = entry.dir / "source.kernels.cpp";
    write_unless_identical(kernels,
                           KernelSource{.prelude = {}, .functions = source.functions}.joined());
    compile_shared_object(including(config, prelude_header), kernels, output, extra_args);
  }
  log_progress(what, source.functions.size(), source.functions.size());
}

// Compiles the entry's source (`joined`: source.joined()) into a temporary file, then publishes it
// as module.so and ok.
std::shared_ptr<const LoadedModule> build_entry(const EntryFiles& entry, const KernelSource& source,
                                                std::string_view joined, size_t parts,
                                                const CompilerConfig& config,
                                                const std::vector<std::string>& extra_args,
                                                std::string_view what) {
  write_unless_identical(entry.source, joined);

  TemporaryFiles unpublished;  // removed on failure; renamed away on success
  const fs::path temporary = unpublished.add(unique_temporary_name(entry.module));
  compilations.fetch_add(1);
  // Kernels include the prelude precompiled; should that fail, the source compiles whole.
  std::optional<fs::path> prelude_header;
  if (!source.functions.empty()) {
    prelude_header = precompiled_prelude(source.prelude, config, extra_args);
  }
  try {
    try {
      compile_entry(entry, source, parts, config, extra_args, temporary, prelude_header, what);
    } catch (const Error& error) {
      if (!prelude_header) throw;
      logs::log(logs::Channel::perf_hints,
                fmt::format("code cache: {} did not compile with the precompiled prelude {}; "
                            "compiling it whole: {}",
                            what, prelude_header->string(), error.what()));
      compile_entry(entry, source, parts, config, extra_args, temporary, std::nullopt, what);
    }
  } catch (const Error& error) {
    KILN_FAIL("{}\nThe generated source is kept at {}{}", error.what(), entry.source.string(),
              parts <= 1 ? "" : " (its parts beside it)");
  }
  // module.so and ok change together: loads (shared lock) see both old or both new.
  FolderLock lock(entry.dir, FolderLock::Mode::exclusive);
  publish_with_record(temporary, entry.module, entry.ok);
  try {
    return std::make_shared<const LoadedModule>(LoadedModule::open(entry.module));
  } catch (const Error& error) {
    KILN_FAIL("{}\nThe generated source is kept at {}", error.what(), entry.source.string());
  }
}

// `parts`: how many translation units to compile the source in if it must be compiled.
std::shared_ptr<const LoadedModule> load_or_build(const KernelSource& source, size_t parts,
                                                  const CompilerConfig& config,
                                                  const std::vector<std::string>& extra_args,
                                                  std::string_view what) {
  const std::string joined = source.joined();
  const std::string key = cache_key(joined, config, extra_args);
  std::shared_ptr<KeySlot> slot = slot_for(key);
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (std::shared_ptr<const LoadedModule> module = slot->module.lock()) return module;

  EntryFiles entry(cache_entry_dir(key));
  create_private_directory(entry.dir.parent_path(), kCacheDirHint);
  create_private_directory(entry.dir, kCacheDirHint);
  remove_stale_temporaries(entry.dir, kStaleTemporaryAge);
  std::shared_ptr<const LoadedModule> module = load_entry(entry, what);
  if (!module) module = build_entry(entry, source, joined, parts, config, extra_args, what);
  slot->module = module;
  return module;
}

// Runs `load`, adding what failed to compile to its errors.
template <typename Load>
std::shared_ptr<const LoadedModule> naming_failures(std::string_view what, Load&& load) {
  try {
    return load();
  } catch (const Error& error) {
    KILN_FAIL("could not compile {}: {}", what, error.what());
  }
}

}  // namespace

fs::path cache_dir() {
  fs::path dir;
  bool in_shared_tmp = false;
  if (const char* configured = nonempty_env("KILN_CACHE_DIR")) {
    dir = configured;
  } else if (const char* home = nonempty_env("HOME")) {
    dir = fs::path(home) / ".cache" / "kiln";
  } else {
    dir = fmt::format("/tmp/kiln-cache-{}", ::geteuid());
    in_shared_tmp = true;
  }
  // Absolute, so that a later chdir does not move the cache (or what dlopen loads).
  std::error_code ec;
  fs::path absolute = fs::absolute(dir, ec);
  if (!ec) dir = absolute;
  create_private_directory(dir, kCacheDirHint);
  if (in_shared_tmp) check_owned_by_this_user(dir);
  KILN_CHECK(::access(dir.c_str(), W_OK | X_OK) == 0,
             "kiln's code cache folder {} is not writable ({}); {}", dir.string(),
             std::strerror(errno), kCacheDirHint);
  create_private_directory(dir / "cpp", kCacheDirHint);
  return dir;
}

std::string cache_key(std::string_view source, const CompilerConfig& config,
                      const std::vector<std::string>& extra_args) {
  // Each part length-prefixed, so that no two different part lists serialize alike.
  std::string material;
  auto add = [&material](std::string_view part) {
    material += fmt::format("{}:", part.size());
    material += part;
  };
  add("kiln code cache v1");
  add(source);
  add(compiler_identity(config));
  add(std::to_string(config.flags.size()));
  for (const std::string& flag : config.flags) add(flag);
  add(std::to_string(extra_args.size()));
  for (const std::string& arg : extra_args) add(arg);
  add(compiles_for_host(config) ? host_cpu_description() : "");
  return content_hash(material);
}

fs::path cache_entry_dir(const std::string& key) {
  return cache_dir() / "cpp" / key.substr(0, 2) / key;
}

size_t compile_threads() {
  const char* configured = nonempty_env("KILN_COMPILE_THREADS");
  if (configured == nullptr) return std::max(std::thread::hardware_concurrency(), 1u);
  const std::string_view text(configured);
  size_t threads = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  KILN_CHECK(error == std::errc() && end == text.data() + text.size() && threads > 0,
             "KILN_COMPILE_THREADS must be a positive integer (how many compiler processes may "
             "compile one graph's kernels at once), not '{}'",
             text);
  return threads;
}

std::shared_ptr<const LoadedModule> load_or_compile(const KernelSource& source,
                                                    const CompilerConfig& config,
                                                    const std::vector<std::string>& extra_args,
                                                    std::string_view what) {
  return naming_failures(what, [&] {
    const size_t parts = part_count(source.functions.size(), compile_threads(), kMinKernelsPerPart);
    return load_or_build(source, parts, config, extra_args, what);
  });
}

std::shared_ptr<const LoadedModule> load_or_compile(std::string_view source,
                                                    const CompilerConfig& config,
                                                    const std::vector<std::string>& extra_args,
                                                    std::string_view what) {
  return naming_failures(what, [&] {
    return load_or_build(KernelSource{.prelude = std::string(source), .functions = {}}, 1, config,
                         extra_args, what);
  });
}

size_t compilation_count() { return compilations.load(); }

size_t compiler_process_count() { return compiler_processes.load(); }

}  // namespace kiln::inductor
