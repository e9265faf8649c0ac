// Autocast and GradScaler on a GPU: ops under autocast(cuda) run in the same dtypes as on the
// CPU under autocast(cpu) with the same dtype, with values within 16-bit tolerance of the CPU's;
// 16-bit matrix products through cuBLAS; a compiled model under autocast against eager under
// autocast on the GPU; a float16 training step with a GradScaler. Skipped without a CUDA device.
#include "capture/capture_test_util.h"
#include "cuda/cuda_test_util.h"

#include <kiln/models/models.h>

namespace kiln {
namespace {

using namespace cuda_test;

#define REQUIRE_GPU() \
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

TEST(CudaAmp, HalfMatrixProductsMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    const Tensor a = sample({3, 40, 72}, DType::Float32, 1).to(dtype);
    const Tensor b = sample({3, 72, 24}, DType::Float32, 2).to(dtype);
    // The CPU's 16-bit products accumulate in float32 too; sums of 72 terms agree to a rounding.
    EXPECT_TRUE(all_close(cpu(gpu(a).bmm(gpu(b))).to(DType::Float32), a.bmm(b).to(DType::Float32),
                          2e-2, 2e-2));
    EXPECT_TRUE(all_close(cpu(mm(gpu(a[0]), gpu(b[0]))).to(DType::Float32),
                          mm(a[0], b[0]).to(DType::Float32), 2e-2, 2e-2));
  }
}

TEST(CudaAmp, AutocastDtypesAndValuesMatchTheCpu) {
  REQUIRE_GPU();
  const Tensor x = sample({16, 32}, DType::Float32, 3), w = sample({24, 32}, DType::Float32, 4);
  auto f = [](const Tensor& a, const Tensor& b) {
    const Tensor h = linear(a, b);
    return std::vector<Tensor>{h, softmax(h, -1), layer_norm(h, {24}), h.relu()};
  };
  std::vector<Tensor> want, got;
  {
    autocast amp(Device::cpu(), DType::BFloat16);
    want = f(x, w);
  }
  {
    autocast amp(Device::cuda(), DType::BFloat16);
    got = f(gpu(x), gpu(w));
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].dtype(), want[i].dtype()) << i;
    EXPECT_TRUE(all_close(cpu(got[i]).to(DType::Float32), want[i].to(DType::Float32), 3e-2, 3e-2))
        << i;
  }
}

TEST(CudaAmp, CompiledBertUnderAutocastMatchesEager) {
  REQUIRE_GPU();
  manual_seed(5);
  auto model = models::bert({.vocab_size = 100,
                             .hidden_size = 32,
                             .num_hidden_layers = 2,
                             .num_attention_heads = 2,
                             .intermediate_size = 64,
                             .max_position_embeddings = 64});
  model->eval();
  model->to(Device::cuda());
  const Tensor ids = gpu(randint(0, 100, {2, 16}));
  autograd::NoGradGuard no_grad;
  autocast amp(Device::cuda(), DType::BFloat16);
  const Tensor want = model->forward(ids);
  auto compiled = compile(model);
  const Tensor got = (*compiled)(ids);
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_TRUE(all_close(cpu(got).to(DType::Float32), cpu(want).to(DType::Float32), 3e-2, 3e-2));
}

// A small resnet under bfloat16 autocast on the GPU, compiled: its convolutions run channels-last
// (cuDNN's tensor-core kernels read NHWC), forward and backward, inference and training, and
// match eager within bfloat16's rounding; gradients keep the parameters' layouts.
TEST(CudaAmp, CompiledConvolutionNetsRunChannelsLast) {
  REQUIRE_GPU();
  auto make = [] {
    manual_seed(9);
    auto m = std::make_shared<models::ResNet>(
        models::ResNetConfig{.layers = {1, 1, 1, 1}, .num_classes = 10});
    m->to(Device::cuda());
    return m;
  };
  auto eager = make(), model = make();
  // The default; options{"layout_optimization": "false"} keeps the row-major layout.
  CompileOptions options, row_major;
  row_major.options["layout_optimization"] = "false";
  manual_seed(8);
  const Tensor x = gpu(randn({4, 3, 64, 64}));
  {
    testing::LogCapture logs("fusion,perf_hints");
    eager->eval();
    model->eval();
    autograd::NoGradGuard no_grad;
    autocast amp(Device::cuda(), DType::BFloat16);
    const Tensor want = eager->forward(x);
    const Tensor got = (*compile(model, options))(x);
    EXPECT_TRUE(all_close(cpu(got).to(DType::Float32), cpu(want).to(DType::Float32), 5e-2, 5e-2));
    EXPECT_EQ(logs.count("convolutions run channels-last"), 1u) << logs.all();
    // Every node derived again on the GPU (a rebuilt node once took the CPU, and the graph
    // "on several devices" ran with the interpreter).
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
    const Tensor kept = (*compile(model, row_major))(x);
    EXPECT_TRUE(all_close(cpu(kept).to(DType::Float32), cpu(want).to(DType::Float32), 5e-2, 5e-2));
    EXPECT_EQ(logs.count("convolutions run channels-last"), 1u) << logs.all();
  }
  // Training: eager and compiled under autocast against a float32 reference (bfloat16's rounding
  // through a few convolutions moves gradients by several percent of their largest, and ReLU
  // masks flip; the compiled step must stay as close to float32 as eager's).
  auto reference = make();
  for (auto* m : {eager.get(), model.get(), reference.get()}) m->train();
  testing::LogCapture logs("fusion,perf_hints");
  auto compiled = compile(model, options);
  Tensor want, got;
  {
    autocast amp(Device::cuda(), DType::BFloat16);
    want = eager->forward(x).to(DType::Float32).square().mean();
    got = (*compiled)(x).to(DType::Float32).square().mean();
  }
  const Tensor exact = reference->forward(x).square().mean();
  want.backward();
  got.backward();
  exact.backward();
  EXPECT_TRUE(all_close(cpu(got), cpu(want), 5e-2, 5e-2));
  const auto eager_parameters = eager->named_parameters();
  const auto exact_parameters = reference->named_parameters();
  for (const auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_TRUE(p.grad().is_contiguous()) << name;
    const Tensor r = cpu(exact_parameters.at(name).grad());
    const double scale = r.abs().max().item<double>() + 1e-6;
    const double eager_error =
        (cpu(eager_parameters.at(name).grad()) - r).abs().max().item<double>();
    const double compiled_error = (cpu(p.grad()) - r).abs().max().item<double>();
    EXPECT_LT(compiled_error, 2 * eager_error + 0.02 * scale)
        << name << ": eager " << eager_error / scale << ", compiled " << compiled_error / scale
        << " of the largest float32 gradient";
  }
  EXPECT_EQ(logs.count("convolutions and their backward run channels-last"), 1u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

TEST(CudaAmp, Float16TrainingStepWithGradScaler) {
  REQUIRE_GPU();
  manual_seed(6);
  auto model = models::mlp({.in_features = 16, .hidden_features = {32}, .out_features = 4});
  auto reference = models::mlp({.in_features = 16, .hidden_features = {32}, .out_features = 4});
  reference->load_state_dict(model->state_dict());
  model->to(Device::cuda());
  const Tensor x = sample({8, 16}, DType::Float32, 7);
  optim::SGD opt(model->parameters(), {.lr = 0.1});
  optim::SGD reference_opt(reference->parameters(), {.lr = 0.1});
  GradScaler scaler({.init_scale = 1024.0});
  Tensor loss;
  {
    autocast amp(Device::cuda(), DType::Float16);
    loss = model->forward(gpu(x)).square().mean();
  }
  scaler.scale(loss).backward();
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  // The same step in float32 on the CPU: float16 forward and gradients agree to ~1e-2.
  reference->forward(x).square().mean().backward();
  reference_opt.step();
  const auto q = reference->named_parameters();
  for (const auto& [name, p] : model->named_parameters()) {
    EXPECT_EQ(p.dtype(), DType::Float32) << name;  // parameters stay float32
    EXPECT_TRUE(all_close(cpu(p.detach()), q.at(name).detach(), 2e-2, 2e-3)) << name;
  }
}

}  // namespace
}  // namespace kiln
