#pragma once
// Running a lowered program: the generated kernels (loaded from the code cache) and the extern
// calls, in order, on buffers that are the graph's input tensors, places in the planned arena
// (memory_plan.h), or tensors allocated per call (outputs, extern results), each released after
// its last reader. In max-autotune the first call also chooses, by timing, each loop nest's
// variant and each small matmul's extern call or generated kernels (autotune.h).
#include "inductor/autotune.h"
#include "inductor/loaded_module.h"
#include "inductor/loop_ir.h"
#include "inductor/memory_plan.h"

#include <kiln/core/tensor.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::inductor {

class CompiledProgram {
 public:
  // `module` holds one function per kernel of `program` (null when it has no kernels). With
  // `keep_arena` (mode "reduce-overhead") the arena is allocated once and reused by every call
  // (a call made while another runs gets its own). With autotune.enabled the first call times
  // the variants (others wait for it).
  CompiledProgram(Program program, std::shared_ptr<const LoadedModule> module,
                  bool keep_arena = false, AutotuneSettings autotune = {});
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;

  const MemoryPlan& memory_plan() const { return plan_; }

 private:
  using KernelFn = void (*)(void* const*);
  // A loop nest's functions: the default and its variants (one tuning site).
  struct NestFunctions {
    TuningSite site;
    std::vector<KernelFn> functions;
    size_t chosen = 0;  // set by the tuning call, read-only after
  };
  // A step's choices: its nest, or a generated alternative's nests and which way runs.
  struct StepFunctions {
    std::vector<NestFunctions> nests;
    std::optional<TuningSite> extern_or_generated;
    bool generated = false;
  };
  // Tensors and storage base pointers of the buffers during one call.
  struct Buffers {
    std::vector<Tensor> tensors;
    std::vector<void*> pointers;
  };

  NestFunctions functions_of(const LoopNest& nest) const;
  std::vector<Tensor> run_with(std::span<const Tensor> inputs, const Tensor& arena,
                               Autotuner* tuner) const;
  std::vector<Tensor> run_once(std::span<const Tensor> inputs, Autotuner* tuner) const;
  void run_nest(const LoopNest& nest, NestFunctions& functions, Buffers& buffers,
                Autotuner* tuner) const;
  void run_extern(const ExternCall& call, Buffers& buffers) const;
  void run_extern_or_generated(const ExternOrGenerated& choice, StepFunctions& functions,
                               Buffers& buffers, Autotuner* tuner) const;
  // Why running `nest` twice could change its results (it reads what it writes), or nullopt.
  std::optional<std::string> not_repeatable(const LoopNest& nest, const Buffers& buffers) const;

  Program program_;
  std::shared_ptr<const LoadedModule> module_;
  MemoryPlan plan_;
  bool keep_arena_;
  AutotuneSettings autotune_;
  mutable std::vector<StepFunctions> functions_;  // one per step (choices made at the first call)
  std::vector<std::vector<int>> release_;         // buffers to release after each step
  std::vector<bool> extern_reads_;                // buffers an extern call reads (needs a tensor)
  mutable std::mutex arena_mutex_;                // held by the call using `arena_`
  mutable Tensor arena_;
  mutable std::mutex tuning_mutex_;  // held by the first call while it times
  mutable std::atomic<bool> tuned_{false};
};

}  // namespace kiln::inductor
