#pragma once
// Non-temporal ("streaming") stores in generated CPU kernels. A vector store normally reads the
// destination's cache line first (read for ownership) and leaves it in the caches; an output larger
// than the last-level cache is evicted before anyone reads it, so those reads only cost memory
// bandwidth: streaming stores write it past the caches (memory-bound kernels move two thirds of the
// bytes). Below the cache size they lose several times over (the next kernel's reads miss), so
// the code generator streams only outputs at least as large as the last-level cache — the rule
// glibc's memcpy applies to its own copies.
#include <kiln/backends/backend.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::inductor {

// The size in bytes of the largest cache level CPU 0 sees (Linux's sysfs; sysconf otherwise), or
// nullopt when neither says. Read once per process.
std::optional<int64_t> last_level_cache_bytes();

// The smallest output, in bytes, whose vector stores stream, from option "streaming_stores":
// "auto" or unset: the last-level cache's size (never when it is unknown); "true": every output
// the rule allows, whatever its size (tests); "false": none. nullopt: no store streams. Raises
// kiln::Error naming the option for another value.
std::optional<int64_t> streaming_store_threshold(const std::optional<std::string>& option,
                                                 std::optional<int64_t> cache_bytes);
std::optional<int64_t> streaming_store_threshold(const BackendContext& context);

}  // namespace kiln::inductor
