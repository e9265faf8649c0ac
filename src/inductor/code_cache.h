#pragma once
// The inductor's on-disk code cache: generated C++ source in, loaded shared object out.
//
// Layout: <cache_dir()>/cpp/<key[0:2]>/<key>/ holds source.cpp, module.so and ok, where ok (written
// last) records module.so's size and content hash. key = content_hash of the source, the
// compiler's identity, its flags, the extra arguments and, for -march=native, the host CPU.
//
// Parallel compilation: a source with many kernels is split into N translation units (the prelude
// and a group of kernels each, source.part<i>of<N>.cpp beside source.cpp), compiled into objects
// by N compiler processes at once and linked into module.so. N = kernels / kMinKernelsPerPart, at
// most compile_threads(); with N = 1 the source is compiled by one process, without a link step.
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
#include "inductor/kernel_source.h"
#include "inductor/loaded_module.h"

namespace kiln::inductor {

// What to do when a cache folder cannot be made or written (part of those errors).
inline constexpr std::string_view kCacheDirHint = "set KILN_CACHE_DIR to a writable folder";

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

// Kernels per translation unit below which a source is not split further. The prelude every part
// repeats costs about as much compile time as 10 to 15 kernels (measured: docs/INDUCTOR.md).
inline constexpr size_t kMinKernelsPerPart = 16;

// How many compiler processes may compile one source at once: KILN_COMPILE_THREADS (a positive
// integer), else the hardware's thread count. Raises kiln::Error for a malformed value.
size_t compile_threads();

// The module built from `source` (cached by its joined text): already loaded in this process, else
// loaded from a valid cache entry, else compiled (once per key per process, even from several
// threads at once) and stored. `what` names the kernel or graph in errors. A failed compilation
// raises kiln::Error with the compiler's messages and the path of the source (of the part that
// failed when split), which stays in the entry folder.
std::shared_ptr<const LoadedModule> load_or_compile(const KernelSource& source,
                                                    const CompilerConfig& config,
                                                    const std::vector<std::string>& extra_args,
                                                    std::string_view what);
// A source compiled as one translation unit whatever its size.
std::shared_ptr<const LoadedModule> load_or_compile(std::string_view source,
                                                    const CompilerConfig& config,
                                                    const std::vector<std::string>& extra_args,
                                                    std::string_view what);

// How many cache entries load_or_compile has built in this process (for tests).
size_t compilation_count();
// How many compiler processes (compilations of a whole source or a part, and links) it has
// started in this process (for tests).
size_t compiler_process_count();

// The host CPU as /proc/cpuinfo describes it (model and flags of the first processor): part of
// the key of code compiled for the host, and of max-autotune's timings (autotune_winners.h).
const std::string& host_cpu_description();

}  // namespace kiln::inductor
