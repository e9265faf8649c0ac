#pragma once
// The generated sources' prelude (includes, helpers, kiln's vector type) compiled once per
// compiler configuration into a precompiled header in the code cache. <immintrin.h> and the
// standard headers are most of a small module's compile time: with g++ -O3 -march=native a
// module of 31 kernels took 1.95 s whole and 0.49 s with its prelude precompiled (clang: 1.7 s
// and 1.0 s).
//
// Layout: <cache_dir()>/cpp/prelude/<key>/ holds kiln_prelude.h, its compiled form beside it
// (kiln_prelude.h.gch for g++, kiln_prelude.h.pch for clang: each finds it for `-include
// kiln_prelude.h`) and ok (the compiled form's size and content hash, written last). The compiled
// form is published as modules are (a temporary file renamed, ok under an exclusive flock); one
// that does not match ok is logged on perf_hints and rebuilt.
#include "inductor/cpp_compiler.h"

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::inductor {

// The header to -include in place of `prelude` (its precompiled form built and checked once per
// process); nullopt when that cannot be built (logged on perf_hints): sources then carry the
// prelude's text.
std::optional<std::filesystem::path> precompiled_prelude(
    std::string_view prelude, const CompilerConfig& config,
    const std::vector<std::string>& extra_args);

}  // namespace kiln::inductor
