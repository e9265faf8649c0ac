#pragma once
// Guards (DESIGN.md §3): what a compiled entry assumed about its call — each argument leaf (a
// tensor's dtype, device, sizes, strides and requires_grad; any other leaf's value), grad and
// inference mode, and for a compiled Module the training flag of every submodule and the identity
// and metadata of its parameters and buffers. A call reuses an entry only if all of them hold.
#include <kiln/capture/pytree.h>
#include <kiln/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::capture {

// The thread state guards read.
struct GlobalState {
  bool grad_enabled = true;
  bool inference_mode = false;
  static GlobalState current();
};

class Guards {
 public:
  Guards(const Leaves& args, GlobalState state, const std::shared_ptr<nn::Module>& module);

  bool check(const Leaves& args, GlobalState state) const;
  // The first guard that fails, in words ("arg 0: size of dim 1 changed from 128 to 64"), or
  // nullopt if all hold.
  std::optional<std::string> first_failure(const Leaves& args, GlobalState state) const;
  // One line per guard, for the guards log and explain.
  std::vector<std::string> describe() const;

 private:
  struct TensorFacts {
    DType dtype;
    Device device;
    DimVector sizes;
    DimVector strides;
    bool requires_grad;
  };
  static TensorFacts facts_of(const Tensor& t);
  static bool same_facts(const TensorFacts& had, const Tensor& now);
  std::vector<Tensor> current_module_tensors() const;  // parameters then buffers
  static std::optional<std::string> tensor_change(const std::string& what, const TensorFacts& had,
                                                  const Tensor& now);

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
