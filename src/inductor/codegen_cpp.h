#pragma once
// The CPU code generator: one C++ translation unit per program, one extern "C" function per
// kernel, `void <name>(void* const* buffers)` taking every buffer's storage base pointer. The
// outer loops run in parallel with OpenMP; the innermost pointwise loop is marked `omp simd`.
#include "inductor/loop_ir.h"

#include <string>
#include <vector>

namespace kiln::inductor {

std::string generate_cpp(const Program& program);
// Compiler arguments the generated source needs (after the source: libraries).
std::vector<std::string> compile_arguments();

}  // namespace kiln::inductor
