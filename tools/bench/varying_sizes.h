#pragma once
// The step of a workload that runs a model over inputs of several sizes in turn (bert-dynamic,
// resnet18-dynamic): one step is a pass over every input, eager or compiled, without autograd;
// it returns every output.
#include <kiln/kiln.h>

#include <vector>

#include "case.h"

namespace kiln_bench {

// `eager` and `compiled` are pointer-like models: (*model)(input) runs one forward.
template <typename Eager, typename Compiled>
Step varying_sizes_step(Eager eager, Compiled compiled, std::vector<Tensor> inputs) {
  const auto pass = [inputs](const auto& model) {
    kiln::autograd::NoGradGuard no_grad;
    std::vector<Tensor> outputs;
    for (const Tensor& x : inputs) outputs.push_back((*model)(x));
    return outputs;
  };
  return {[eager, pass] { return pass(eager); }, [compiled, pass] { return pass(compiled); }};
}

}  // namespace kiln_bench
