#pragma once
// The public autograd API, as torch.autograd: backward() accumulates into leaves' .grad, grad()
// returns gradients without touching .grad.
#include <kiln/autograd/grad_mode.h>
#include <kiln/autograd/node.h>
#include <kiln/core/tensor.h>

#include <optional>
#include <vector>

namespace kiln::autograd {

// Gradients of sum(tensors[i] * grad_tensors[i]) accumulated into the .grad of the leaves that
// require grad (only those in `inputs` when given). An empty grad_tensors entry (or list) means
// ones, allowed for single-element tensors only. retain_graph defaults to create_graph.
void backward(TensorList tensors, TensorList grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              TensorList inputs = {});

// d sum(outputs[i] * grad_outputs[i]) / d inputs[j]. With create_graph the result has history
// (for higher-order gradients). An input the outputs do not depend on raises kiln::Error unless
// allow_unused, when its gradient is an undefined Tensor.
std::vector<Tensor> grad(TensorList outputs, TensorList inputs, TensorList grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

}  // namespace kiln::autograd
