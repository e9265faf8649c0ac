#pragma once
// The autograd node a compiled forward attaches to its outputs: its backward runs the compiled
// backward graph on the values the forward saved and the incoming gradients.
#include <kiln/autograd/node.h>
#include <kiln/backends/backend.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::aot {

class CompiledFunctionBackward final : public autograd::Node {
 public:
  struct Saved {
    Tensor tensor;
    // For saved inputs: the version it had, checked as eager autograd checks saved variables.
    bool check_version = false;
    uint32_t version = 0;
  };
  CompiledFunctionBackward(std::vector<autograd::Edge> edges, CompiledGraph backward,
                           std::vector<Saved> saved, std::string function_name);

  std::string name() const override { return "CompiledFunctionBackward"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override;

 private:
  CompiledGraph backward_;
  std::vector<Saved> saved_;
  std::string function_name_;
  bool released_ = false;
};

}  // namespace kiln::aot
