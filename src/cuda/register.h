#pragma once
// How the CUDA layer fills the CUDA slots of ops declared elsewhere (DESIGN.md §2: a new device
// is one folder). A KILN_CUDA_REGISTER block runs during static initialization, after the ops'
// own declarations: cmake/cuda.cmake adds src/cuda's objects after every other source of the
// library, and a shared library runs its initializers in link order.
#include <kiln/ops/registry.h>

namespace kiln::cuda {

// Sets the CUDA kernel of a structured op (its in-place and out= variants use it too).
void structured(const char* op, ops::ImplFn fn);
// Sets the CUDA function of a custom op (which makes or returns its own outputs).
void custom(const char* op, ops::CustomFn fn);

}  // namespace kiln::cuda

#define KILN_CUDA_REGISTER(name) KILN_REGISTER_OPS(cuda_##name)
