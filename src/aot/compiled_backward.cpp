#include "aot/compiled_backward.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/sym_size_ops.h>

namespace kiln::aot {

CompiledFunctionBackward::CompiledFunctionBackward(std::vector<autograd::Edge> edges,
                                                   CompiledGraph backward, std::vector<Saved> saved,
                                                   std::string function_name)
    : Node(std::move(edges)),
      backward_(std::move(backward)),
      saved_(std::move(saved)),
      function_name_(std::move(function_name)) {}

std::vector<Tensor> CompiledFunctionBackward::apply(std::vector<Tensor>&& grads) {
  KILN_CHECK(!released_,
             "compile: trying to backward through {} a second time, but its saved tensors were "
             "freed after the first backward; pass retain_graph=true to the first one",
             function_name_);
  KILN_CHECK(!autograd::GradMode::is_enabled(),
             "compile: double backward (create_graph=true) through {} is not supported: its "
             "backward is a compiled graph, not differentiable again; compile it with "
             "backend=\"eager\" to take higher-order gradients",
             function_name_);
  std::vector<Tensor> inputs;
  inputs.reserve(saved_.size() + grads.size());
  for (const Saved& s : saved_) {
    KILN_CHECK(!s.check_version || s.tensor.impl()->version() == s.version,
               "one of the variables needed for gradient computation has been modified by an "
               "inplace operation: a tensor of {} saved by {} is at version {}; expected version "
               "{}",
               dtype_name(s.tensor.dtype()), function_name_, s.tensor.impl()->version(), s.version);
    inputs.push_back(s.tensor);
  }
  const auto& metadata = input_metadata();
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) {
      // The backward graph was traced on contiguous tangents (joint_graph.cpp) and may view them
      // by that layout: a gradient arriving in another one (transposed, expanded by a sum's
      // backward) is laid out so first.
      inputs.push_back(grads[i].contiguous());
    } else {
      // An output no gradient reached contributes nothing.
      const InputMetadata& m = metadata[i];
      inputs.push_back(full_symint(m.sym_sizes(), 0, TensorOptions(m.dtype).device(m.device)));
    }
  }
  return backward_(inputs);
}

void CompiledFunctionBackward::release_variables() {
  saved_.clear();
  released_ = true;
}

}  // namespace kiln::aot
