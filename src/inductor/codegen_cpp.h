#pragma once
// The CPU code generator: one C++ source per program (a prelude and one extern "C" function per
// loop nest taking the storage base pointers of the buffers it reads and writes; the code cache may
// compile the functions in several translation units). The shared outer loops run in parallel
// with OpenMP; innermost loops are vectorized.
#include "inductor/kernel_source.h"
#include "inductor/loop_ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::inductor {

struct CppCodegenOptions {
  // max-autotune: each function also gets the variants of autotune_variants() whose code
  // differs, as <function>_<label>, listed in the nests' `variants`; without, the source is
  // exactly the default mode's.
  bool kernel_variants = false;
  // Outputs of at least this many bytes are written with streaming stores where the nest allows
  // (streaming_stores.h); nullopt: none.
  std::optional<int64_t> streaming_store_bytes;
};

// The source of every loop nest of `program`, whose `function` and `args` it sets (nests with the
// same code share a function: `void <function>(void* const* args)`, a pointer per argument): the
// prelude, then one function per distinct nest.
KernelSource generate_cpp(Program& program, const CppCodegenOptions& options = {});
// Compiler arguments the generated source needs (after the source: libraries).
std::vector<std::string> compile_arguments();

}  // namespace kiln::inductor
