#pragma once
// The inductor's on-disk code cache: generated C++ source in, loaded shared object out.
//
// Layout: <cache_dir()>/cpp/<key[0:2]>/<key>/ holds source.cpp, module.so and ok, where ok (written
// last) records module.so's size and content hash. key = content_hash of the source, the
// compiler's identity, its flags, the extra arguments and, for -march=native, the host CPU.
//
// Safety: module.so and ok are only ever replaced whole (a uniquely named temporary file, fsync,
// rename), and replaced together under an exclusive flock of the entry folder, while loads verify
// them under a shared one; so processes compiling the same key at once all succeed and leave one
// valid entry, and a crash leaves only *.tmp* files (removed after an hour). An entry whose
// module.so does not match ok, or fails to load, is reported on the perf_hints log channel and
// rebuilt.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inductor/content_hash.h"
#include "inductor/cpp_compiler.h"
#include "inductor/loaded_module.h"

namespace kiln::inductor {

// KILN_CACHE_DIR, else $HOME/.cache/kiln, else /tmp/kiln-cache-<uid>; created with mode 0700
// (with its cpp/ folder) if absent. Raises kiln::Error naming the folder and KILN_CACHE_DIR when
// it cannot be created or written.
std::filesystem::path cache_dir();

// The cache key of a source compiled with `config` and `extra_args` (32 hex digits). Runs the
// compiler once per process (compiler_identity).
std::string cache_key(std::string_view source, const CompilerConfig& config,
                      const std::vector<std::string>& extra_args);

// The entry folder of `key` in cache_dir().
std::filesystem::path cache_entry_dir(const std::string& key);

// The module built from `source`: already loaded in this process, else loaded from a valid cache
// entry, else compiled (once per key per process, even from several threads at once) and
// stored. `what` names the kernel or graph in errors. A failed compilation raises kiln::Error with
// the compiler's messages and the path of the source, which stays in the entry folder.
std::shared_ptr<const LoadedModule> load_or_compile(std::string_view source,
                                                    const CompilerConfig& config,
                                                    const std::vector<std::string>& extra_args,
                                                    std::string_view what);

// How many times load_or_compile has run the compiler in this process (for tests).
size_t compilation_count();

// The host CPU as /proc/cpuinfo describes it (model and flags of the first processor): part of
// the key of code compiled for the host, and of max-autotune's timings (autotune_winners.h).
const std::string& host_cpu_description();

}  // namespace kiln::inductor
