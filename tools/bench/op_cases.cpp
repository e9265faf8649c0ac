// The op-level workloads of BENCHMARKS.md: pointwise, softmax, layernorm, matmul, numpy and
// overhead. Inference only; the compiled side is kiln::compile of the same function.
#include <kiln/kiln.h>

#include <utility>

#include "case.h"

namespace kiln_bench {
namespace {

Tensor pointwise(const Tensor& x) { return x.sin() * x.cos() + (-x * x).exp() * 0.5 + x.tanh(); }
Tensor softmax_last(const Tensor& x) { return x.softmax(-1); }
Tensor layer_norm_last(const Tensor& x, const Tensor& w, const Tensor& b) {
  return kiln::layer_norm(x, {x.size(-1)}, w, b, 1e-5);
}
Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }
// numpy's sum(sin(a)*cos(b) + exp(-a*a), axis=1), written with kiln tensors.
Tensor numpy_function(const Tensor& a, const Tensor& b) {
  return (a.sin() * b.cos() + (-a * a).exp()).sum({1});
}
Tensor one_tiny_op(const Tensor& x) { return x.sin(); }

// A Step running fn eagerly and compiled on the same inputs, without autograd.
template <typename F, typename... Inputs>
Step function_step(F fn, const kiln::CompileOptions& options, Inputs... inputs) {
  auto compiled = std::make_shared<kiln::Compiled<F>>(kiln::compile(fn, options));
  return {[fn, inputs...] {
            kiln::autograd::NoGradGuard no_grad;
            return std::vector<Tensor>{fn(inputs...)};
          },
          [compiled, inputs...] {
            kiln::autograd::NoGradGuard no_grad;
            return std::vector<Tensor>{(*compiled)(inputs...)};
          }};
}

Case pointwise_case() {
  return {"pointwise", "inference", 1e-5, false,
          [](const kiln::CompileOptions& options, const Setup& setup) {
            kiln::manual_seed(0);
            Tensor x = kiln::randn({setup.size(64, int64_t{1} << 22, int64_t{1} << 24)});
            return function_step(pointwise, options, setup.place(x));
          }};
}

Case softmax_case() {
  return {"softmax", "inference", 1e-5, false,
          [](const kiln::CompileOptions& options, const Setup& setup) {
            kiln::manual_seed(0);
            Tensor x = kiln::randn({setup.size(4, 2048, 8192), setup.size(16, 4096, 4096)});
            return function_step(softmax_last, options, setup.place(x));
          }};
}

Case layernorm_case() {
  return {"layernorm", "inference", 1e-4, false,
          [](const kiln::CompileOptions& options, const Setup& setup) {
            kiln::manual_seed(0);
            const int64_t rows = setup.size(4, 2048, 8192), cols = setup.size(16, 4096, 4096);
            Tensor x = kiln::randn({rows, cols}), w = kiln::randn({cols}), b = kiln::randn({cols});
            return function_step(layer_norm_last, options, setup.place(x), setup.place(w),
                                 setup.place(b));
          }};
}

// Compiled, the GEMM is an extern call: the row shows what compiling costs around it. Its shape
// (1024^3) is the workload's own, the same on both devices.
Case matmul_case() {
  return {"matmul", "inference", 1e-5, false,
          [](const kiln::CompileOptions& options, const Setup& setup) {
            kiln::manual_seed(0);
            const int64_t n = setup.size(16, 1024, 1024);
            Tensor a = kiln::randn({n, n}), b = kiln::randn({n, n});
            return function_step(matmul, options, setup.place(a), setup.place(b));
          }};
}

// CPU only: the workload is measured against numpy itself.
Case numpy_case() {
  return {"numpy",
          "inference",
          1e-4,
          false,
          [](const kiln::CompileOptions& options, const Setup& setup) {
            kiln::manual_seed(0);
            const int64_t rows = setup.tiny() ? 8 : 4096, cols = setup.tiny() ? 16 : 4096;
            Tensor a = kiln::randn({rows, cols}), b = kiln::randn({rows, cols});
            return function_step(numpy_function, options, a, b);
          },
          /*runs_on_gpu=*/false};
}

Case overhead_case() {
  return {"overhead", "inference", 1e-5, false,
          [](const kiln::CompileOptions& options, const Setup& setup) {
            kiln::manual_seed(0);
            return function_step(one_tiny_op, options, setup.place(kiln::randn({16})));
          }};
}

}  // namespace

std::vector<Case> op_cases() {
  return {pointwise_case(), softmax_case(), layernorm_case(), matmul_case()};
}

std::vector<Case> all_cases() {
  std::vector<Case> cases = op_cases();
  for (Case& c : model_cases()) cases.push_back(std::move(c));
  cases.push_back(bert_dynamic_case());
  cases.push_back(resnet_dynamic_case());
  cases.push_back(numpy_case());
  cases.push_back(overhead_case());
  return cases;
}

}  // namespace kiln_bench
