// The optimizers on GPU parameters: Adam, AdamW and SGD with momentum update every dense float32
// parameter of a step in a few multi-tensor launches (src/cuda/kernels/optimizer.cu), whose
// float operations are the CPU's one-pass kernels', rounded alike: after several steps the
// parameters and optimizer state equal the CPU's bit for bit. A CPU state dict loads onto GPU
// parameters with its tensors moved to their device. Sizes cover one element, a
// partial chunk, several chunks, and more parameters than one launch takes. Options the one-pass
// kernels leave to the elementwise ops (amsgrad) match the CPU within float32 rounding.
#include "cuda/cuda_test_util.h"

#include <kiln/optim/adam.h>
#include <kiln/optim/adamw.h>
#include <kiln/optim/sgd.h>

#include <functional>
#include <memory>

namespace kiln {
namespace {

using namespace cuda_test;

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

struct OptimizerCase {
  const char* name;
  MakeOptimizer make;
  bool one_pass;  // the multi-tensor kernels apply (bitwise equality with the CPU)
};

std::vector<OptimizerCase> cases() {
  using namespace optim;
  return {
      {"AdamW",
       [](std::vector<Tensor> p) { return std::make_unique<AdamW>(p, AdamWOptions{.lr = 0.01}); },
       true},
      {"Adam weight decay maximize",
       [](std::vector<Tensor> p) {
         return std::make_unique<Adam>(
             p, AdamOptions{.lr = 0.01, .weight_decay = 0.1, .maximize = true});
       },
       true},
      {"Adam maximize",
       [](std::vector<Tensor> p) {
         return std::make_unique<Adam>(p, AdamOptions{.lr = 0.02, .maximize = true});
       },
       true},
      {"SGD nesterov weight decay",
       [](std::vector<Tensor> p) {
         return std::make_unique<SGD>(
             p, SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
       },
       true},
      {"SGD dampening maximize",
       [](std::vector<Tensor> p) {
         return std::make_unique<SGD>(
             p, SGDOptions{.lr = 0.05, .momentum = 0.8, .dampening = 0.3, .maximize = true});
       },
       true},
      {"AdamW amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<AdamW>(p, AdamWOptions{.lr = 0.01, .amsgrad = true});
       },
       false},
  };
}

TEST(CudaOptimizers, MultiTensorStepsEqualTheCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // 41 parameters (more than one launch's 36), 1 to 70000 elements (a chunk is 4096).
  std::vector<int64_t> sizes = {1, 7, 4096, 4097, 70000};
  while (sizes.size() < 41) sizes.push_back(static_cast<int64_t>(sizes.size()) * 37 % 1000 + 1);
  for (const OptimizerCase& c : cases()) {
    SCOPED_TRACE(c.name);
    manual_seed(21);
    std::vector<Tensor> on_cpu, on_gpu, starts;
    for (int64_t n : sizes) {
      const Tensor start = randn({n});
      starts.push_back(start);
      on_cpu.push_back(start.clone().requires_grad_(true));
      on_gpu.push_back(gpu(start).requires_grad_(true));
    }
    auto cpu_opt = c.make(on_cpu), gpu_opt = c.make(on_gpu);
    for (int step = 0; step < 4; ++step) {
      for (size_t i = 0; i < sizes.size(); ++i) {
        const Tensor g = randn({sizes[i]});
        on_cpu[i].mutable_grad() = g;
        on_gpu[i].mutable_grad() = gpu(g);
      }
      cpu_opt->step();
      gpu_opt->step();
      if (step == 0) {
        // SGD's first step makes its momentum buffers with elementwise ops, whose GPU kernels
        // may round differently (contracted multiply-adds): both sides continue from the CPU's
        // parameters and state (a CPU state dict loaded onto GPU parameters), so that the
        // one-pass steps after it start equal.
        autograd::NoGradGuard no_grad;
        for (size_t i = 0; i < sizes.size(); ++i) on_gpu[i].copy_(on_cpu[i]);
        gpu_opt->load_state_dict(cpu_opt->state_dict());
      }
    }
    const double rtol = c.one_pass ? 0 : 1e-6, atol = c.one_pass ? 0 : 1e-7;
    // Held here: a range-for over a member of the temporary state dict would outlive it.
    const optim::OptimizerState gpu_state = gpu_opt->state_dict();
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_TRUE(on_gpu[i].is_cuda());
      for (const auto& [key, value] : gpu_state.state.at(static_cast<int64_t>(i))) {
        if (value.dim() > 0) {
          EXPECT_TRUE(value.is_cuda()) << key << " of parameter " << i;
        }
      }
      EXPECT_TRUE(on_gpu[i].is_leaf() && on_gpu[i].requires_grad());
      EXPECT_TRUE(all_close(cpu(on_gpu[i]), on_cpu[i], rtol, atol)) << "parameter " << i;
    }
    const optim::OptimizerState& a = gpu_state;
    const optim::OptimizerState b = cpu_opt->state_dict();
    ASSERT_EQ(a.state.size(), b.state.size());
    for (const auto& [index, entries] : b.state) {
      for (const auto& [key, value] : entries) {
        EXPECT_TRUE(all_close(cpu(a.state.at(index).at(key)), value, rtol, atol))
            << key << " of parameter " << index;
      }
    }
    EXPECT_FALSE(all_close(cpu(on_gpu[4]), starts[4], 1e-4, 0)) << "the parameters moved";
  }
}

}  // namespace
}  // namespace kiln
