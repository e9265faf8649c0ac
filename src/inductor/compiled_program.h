#pragma once
// Running a lowered program: the generated kernels (loaded from the code cache) and the extern
// calls, in order, on buffers that are the graph's input tensors, places in the planned arena
// (memory_plan.h), or tensors allocated per call (outputs, extern results), each released after
// its last reader. In max-autotune the first call also chooses, by timing, each loop nest's
// variant and each small matmul's extern call or generated kernels (autotune.h).
//
// A symbolic program (dynamic shapes) binds its symbols from each call's input sizes; the
// kernels take their values, and the buffers' layouts and the memory plan are worked out per
// binding (kept for the last few bindings, so that a loop over a few sizes plans each once).
#include "inductor/autotune.h"
#include "inductor/kernel_function.h"
#include "inductor/loop_ir.h"
#include "inductor/memory_plan.h"

#include "symbolic/symbol_binding.h"

#include <kiln/core/tensor.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::inductor {

class CompiledProgram {
 public:
  // `kernels` gives the function of each loop nest of `program` (unset when it has none); the
  // buffers live on program.device. With `keep_arena` (mode "reduce-overhead") the arena is
  // allocated once and reused by every call (a call made while another runs gets its own). With
  // autotune.enabled the first call times the variants (others wait for it).
  CompiledProgram(Program program, const KernelLoader& kernels, bool keep_arena = false,
                  AutotuneSettings autotune = {});
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;

  // The plan of a static program; a symbolic one's at its example sizes.
  const MemoryPlan& memory_plan() const { return hint_layout_->plan; }

 private:
  // A layout of concrete sizes.
  struct View {
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
  };
  // The program's layouts at one binding of its symbols.
  struct Layout {
    std::vector<int64_t> symbols;
    std::vector<View> buffers;                     // per buffer
    std::vector<std::vector<View>> extern_inputs;  // per step: its extern call's inputs
    std::vector<View> outputs;
    std::vector<int64_t> bytes;  // per buffer: its storage
    MemoryPlan plan;
  };
  // A loop nest's functions: the default and its variants (one tuning site).
  struct NestFunctions {
    TuningSite site;
    std::vector<KernelFunction> functions;
    size_t chosen = 0;  // set by the tuning call, read-only after
  };
  // A step's choices: its nest, or a generated alternative's nests and which way runs.
  struct StepFunctions {
    std::vector<NestFunctions> nests;
    std::optional<TuningSite> extern_or_generated;
    bool generated = false;
  };
  // Tensors and storage base pointers of the buffers during one call, and its layout.
  struct Buffers {
    std::vector<Tensor> tensors;
    std::vector<void*> pointers;
    const Layout* layout = nullptr;
  };

  NestFunctions functions_of(const LoopNest& nest, const KernelLoader& kernels) const;
  std::shared_ptr<const Layout> layout_at(std::vector<int64_t> symbols) const;
  std::shared_ptr<const Layout> layout_for(std::span<const Tensor> inputs) const;
  std::vector<Tensor> run_with(std::span<const Tensor> inputs, const Layout& layout,
                               const Tensor& arena, Autotuner* tuner) const;
  std::vector<Tensor> run_once(std::span<const Tensor> inputs, Autotuner* tuner) const;
  void run_nest(const LoopNest& nest, NestFunctions& functions, Buffers& buffers,
                Autotuner* tuner) const;
  void run_extern(const ExternCall& call, std::span<const View> inputs, Buffers& buffers) const;
  void run_extern_or_generated(const ExternOrGenerated& choice, std::span<const View> inputs,
                               StepFunctions& functions, Buffers& buffers, Autotuner* tuner) const;
  // A fresh tensor in buffer b's layout of this call; `t` itself when it is in that layout,
  // else a copy in it.
  Tensor allocate(const Buffers& buffers, int b) const;
  Tensor in_layout_of(const Tensor& t, const Buffers& buffers, int b) const;
  // Why running `nest` twice could change its results (it reads what it writes), or nullopt.
  std::optional<std::string> not_repeatable(const LoopNest& nest, const Buffers& buffers) const;

  Program program_;
  symbolic::SymbolBinding binding_;
  std::shared_ptr<const Layout> hint_layout_;  // the static layout, or at the example sizes
  mutable std::mutex layouts_mutex_;
  mutable std::deque<std::shared_ptr<const Layout>> recent_layouts_;  // under layouts_mutex_
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
