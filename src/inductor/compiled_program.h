#pragma once
// Running a lowered program: the generated kernels (loaded from the code cache) and the extern
// calls, in order, on buffers that are the graph's input tensors or tensors allocated per call;
// each intermediate buffer is released after its last reader.
#include "inductor/loaded_module.h"
#include "inductor/loop_ir.h"

#include <kiln/core/tensor.h>

#include <memory>
#include <span>
#include <vector>

namespace kiln::inductor {

class CompiledProgram {
 public:
  // `module` holds one function per kernel of `program` (null when it has no kernels).
  CompiledProgram(Program program, std::shared_ptr<const LoadedModule> module);
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;

 private:
  using KernelFn = void (*)(void* const*);
  Program program_;
  std::shared_ptr<const LoadedModule> module_;
  std::vector<KernelFn> kernels_;          // one per step (null for extern calls)
  std::vector<std::vector<int>> release_;  // buffers to release after each step
};

}  // namespace kiln::inductor
