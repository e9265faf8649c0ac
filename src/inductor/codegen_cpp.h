#pragma once
// The CPU code generator: one C++ source per program (a prelude and one extern "C" function per
// loop nest taking the storage base pointers of the buffers it reads and writes; the code cache may
// compile the functions in several translation units). The shared outer loops run in parallel
// with OpenMP; innermost loops are vectorized.
#include "inductor/kernel_source.h"
#include "inductor/loop_ir.h"

#include <string>
#include <vector>

namespace kiln::inductor {

// The source of every loop nest of `program`, whose `function` and `args` it sets (nests with the
// same code share a function: `void <function>(void* const* args)`, a pointer per argument): the
// prelude, then one function per distinct nest. With `kernel_variants` (max-autotune) each
// function also gets the variants of autotune_variants() whose code differs, as
// <function>_<label>, listed in the nests' `variants`; without, the source is exactly the default
// mode's.
KernelSource generate_cpp(Program& program, bool kernel_variants = false);
// Compiler arguments the generated source needs (after the source: libraries).
std::vector<std::string> compile_arguments();

}  // namespace kiln::inductor
