#pragma once
// Running a lowered program: the generated kernels (loaded from the code cache) and the extern
// calls, in order, on buffers that are the graph's input tensors, places in the planned arena
// (memory_plan.h), or tensors allocated per call (outputs, extern results), each released after
// its last reader.
#include "inductor/loaded_module.h"
#include "inductor/loop_ir.h"
#include "inductor/memory_plan.h"

#include <kiln/core/tensor.h>

#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace kiln::inductor {

class CompiledProgram {
 public:
  // `module` holds one function per kernel of `program` (null when it has no kernels). With
  // `keep_arena` (mode "reduce-overhead") the arena is allocated once and reused by every call
  // (a call made while another runs gets its own).
  CompiledProgram(Program program, std::shared_ptr<const LoadedModule> module,
                  bool keep_arena = false);
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;

  const MemoryPlan& memory_plan() const { return plan_; }

 private:
  using KernelFn = void (*)(void* const*);
  std::vector<Tensor> run_with(std::span<const Tensor> inputs, const Tensor& arena) const;

  Program program_;
  std::shared_ptr<const LoadedModule> module_;
  MemoryPlan plan_;
  bool keep_arena_;
  std::vector<KernelFn> kernels_;          // one per step (null for extern calls)
  std::vector<std::vector<int>> release_;  // buffers to release after each step
  std::vector<bool> extern_reads_;         // buffers an extern call reads (needs a tensor)
  mutable std::mutex arena_mutex_;         // held by the call using `arena_`
  mutable Tensor arena_;
};

}  // namespace kiln::inductor
