#pragma once
// Guards (DESIGN.md §3): what a compiled entry assumed about its call — each argument leaf (a
// tensor's dtype, device, sizes, strides and requires_grad; any other leaf's value), grad and
// inference mode, and for a compiled Module the training flag of every submodule and the identity
// and metadata of its parameters and buffers. A call reuses an entry only if all of them hold.
//
// Dynamic dimensions (traced as symbols) are not guarded here: their sizes are the ShapeEnv's
// GuardChecker's to check, and a tensor with one must stay contiguous (its proxy was traced with
// contiguous strides over the symbolic sizes).
#include "capture/dynamic_dim.h"

#include <kiln/capture/pytree.h>
#include <kiln/nn/module.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::capture {

// The thread state guards read.
struct GlobalState {
  bool grad_enabled = true;
  bool inference_mode = false;
  uint32_t autocast = 0;  // amp::autocast_state_key(): the casts a trace recorded depend on it
  static GlobalState current();
};

class Guards {
 public:
  // `dynamic`: the argument dimensions traced as symbols (their leaves must be tensors).
  Guards(const Leaves& args, GlobalState state, const std::shared_ptr<nn::Module>& module,
         std::span<const DynamicDim> dynamic = {});

  bool check(const Leaves& args, GlobalState state) const;
  // The first guard that fails, in words ("arg 0: size of dim 1 changed from 128 to 64"), or
  // nullopt if all hold.
  std::optional<std::string> first_failure(const Leaves& args, GlobalState state) const;
  // Automatic dynamic: when the only guards `args` fail are sizes of argument dimensions (the
  // strides of a contiguous tensor following its sizes), those dimensions; else nullopt.
  std::optional<std::vector<DynamicDim>> size_only_changes(const Leaves& args,
                                                           GlobalState state) const;
  // One line per guard, for the guards log and explain.
  std::vector<std::string> describe() const;

 private:
  struct TensorFacts {
    DType dtype;
    Device device;
    DimVector sizes;
    DimVector strides;
    bool requires_grad;
    bool contiguous;
    // A Python number wrapped as a 0-dim tensor does not take part in type promotion.
    bool wrapped_number = false;
    uint64_t dynamic_mask = 0;  // bit d: dim d is dynamic (not guarded; contiguity is)
    bool is_dynamic(size_t d) const { return d < 64 && ((dynamic_mask >> d) & 1u); }
  };
  static TensorFacts facts_of(const Tensor& t);
  static bool same_facts(const TensorFacts& had, const Tensor& now);
  std::vector<Tensor> current_module_tensors() const;  // parameters then buffers
  // `ignore_sizes`: sizes may differ, and strides with them if the tensor stays as contiguous.
  static std::optional<std::string> tensor_change(const std::string& what, const TensorFacts& had,
                                                  const Tensor& now, bool ignore_sizes = false);
  std::optional<std::string> first_failure_impl(const Leaves& args, GlobalState state,
                                                bool ignore_sizes) const;

  Leaves leaves_;  // non-tensor leaves compared by value; tensor leaves by their facts
  std::vector<std::optional<TensorFacts>> leaf_facts_;
  GlobalState state_;
  nn::Module* module_ = nullptr;
  std::vector<std::pair<nn::Module*, bool>> training_;
  std::vector<std::string> module_names_;
  std::vector<Tensor> module_tensors_;  // parameters then buffers, in named order
  std::vector<std::string> module_tensor_names_;
  std::vector<TensorFacts> module_tensor_facts_;
};

}  // namespace kiln::capture
