#pragma once
// What the runtime calls to run a loop nest, whatever generated it: the storage base pointers of
// the nest's arguments (LoopNest::args, in order) and the symbols' values. A CPU function from a
// loaded shared object, or a CUDA kernel's launch on the current stream.
#include "inductor/loop_ir.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace kiln::inductor {

using KernelFunction = std::function<void(void* const* args, const int64_t* symbols)>;
// The function named `function` (the nest's own or one of its variants') for `nest`.
using KernelLoader =
    std::function<KernelFunction(const LoopNest& nest, const std::string& function)>;

class LoadedModule;
// The functions of a module compiled from generate_cpp's source (kept loaded by the loader).
KernelLoader cpu_kernels(std::shared_ptr<const LoadedModule> module);

}  // namespace kiln::inductor
