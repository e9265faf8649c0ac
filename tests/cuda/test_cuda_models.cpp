// The reference models on a GPU: a model moved with Module::to(Device::cuda()) against the same
// model (same seed) on the CPU, forward in float32 and three training steps (SGD with momentum, in
// train mode: BatchNorm statistics and dropout masks included) in float64, eagerly and compiled
// with the inductor. Float64 keeps the comparison tight (1e-9): the GPU's convolutions, GEMMs and
// reductions add in other orders than the CPU's, and in float32 three steps of these unstable
// trainings amplify that past any useful tolerance (as tests/aot/test_aot_training.cpp notes).
// Skipped without a CUDA device.
#include "capture/capture_test_util.h"
#include "cuda/cuda_test_util.h"

#include <kiln/models/models.h>

namespace kiln {
namespace {

using namespace cuda_test;

#define REQUIRE_GPU() \
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

using MakeModel = std::function<std::shared_ptr<nn::Module>()>;

std::shared_ptr<nn::Module> small_bert() {
  return models::bert({.vocab_size = 100,
                       .hidden_size = 32,
                       .num_hidden_layers = 2,
                       .num_attention_heads = 2,
                       .intermediate_size = 64,
                       .max_position_embeddings = 64});
}

std::shared_ptr<nn::Module> small_gpt2() {
  return models::gpt2(
      {.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2});
}

std::shared_ptr<nn::Module> small_mlp() {
  return models::mlp({.in_features = 16, .hidden_features = {32, 32}, .out_features = 8});
}

std::shared_ptr<nn::Module> small_resnet18() { return models::resnet18(10); }

struct Workload {
  const char* name;
  MakeModel make;
  std::function<Tensor()> input;
  // Relative tolerance of the float64 training comparison (gradients get ten times it).
  double rtol = 1e-9;
};

std::vector<Workload> workloads() {
  return {{"mlp", small_mlp,
           [] {
             return randn({8, 16});
           }},
          // Train-mode BatchNorm normalizes by batch variances: at 2 samples of 32x32, layer4's
          // 1x1 maps give two values per channel, and where they nearly agree the GPU's and the
          // CPU's last-bit differences (sums in other orders) grew to 1e-5 within a step. Four
          // 64x64 samples give 16 values per channel there.
          {"resnet18", small_resnet18,
           [] {
             return randn({4, 3, 64, 64});
           },
           1e-6},
          {"bert", small_bert,
           [] {
             return randint(0, 100, {2, 16});
           }},
          {"gpt2", small_gpt2, [] {
             return randint(0, 100, {2, 16});
           }}};
}

// A model made on the CPU from `seed`, then moved: the GPU copy starts from the same values.
std::shared_ptr<nn::Module> on_gpu(const MakeModel& make, uint64_t seed) {
  manual_seed(seed);
  auto m = make();
  m->to(Device::cuda());
  return m;
}

TEST(CudaModels, ModuleToMovesParametersBuffersAndGradients) {
  REQUIRE_GPU();
  manual_seed(1);
  auto model = small_resnet18();
  const Tensor weight = model->named_parameters().at("conv1.weight");
  const TensorImpl* identity = weight.impl();
  const Tensor before = weight.detach().clone();
  (model->forward(randn({2, 3, 32, 32})).square().mean()).backward();
  model->to(Device::cuda());
  for (const auto& [name, p] : model->named_parameters()) {
    EXPECT_TRUE(p.device().is_cuda()) << name;
    if (p.grad().defined()) {
      EXPECT_TRUE(p.grad().device().is_cuda()) << name;
    }
  }
  for (const auto& [name, b] : model->named_buffers()) {
    if (b.defined()) {
      EXPECT_TRUE(b.device().is_cuda()) << name;  // num_batches_tracked too
    }
  }
  // The same tensor (an optimizer made before the move still holds it), with the same values.
  const Tensor moved = model->named_parameters().at("conv1.weight");
  EXPECT_EQ(moved.impl(), identity);
  EXPECT_TRUE(same_values(cpu(moved.detach()), before));
  model->to(Device::cpu());
  EXPECT_TRUE(model->named_parameters().at("conv1.weight").device().is_cpu());
}

TEST(CudaModels, InferenceMatchesTheCpu) {
  REQUIRE_GPU();
  for (const Workload& w : workloads()) {
    SCOPED_TRACE(w.name);
    manual_seed(7);
    auto reference = w.make();
    reference->eval();
    auto model = on_gpu(w.make, 7);
    model->eval();
    manual_seed(8);
    const Tensor input = w.input();
    autograd::NoGradGuard no_grad;
    const Tensor want = reference->forward(input);
    EXPECT_TRUE(all_close(cpu(model->forward(gpu(input))), want, 1e-4, 1e-5)) << "eager";
    auto compiled = compile(model);
    EXPECT_TRUE(all_close(cpu((*compiled)(gpu(input))), want, 1e-4, 1e-5)) << "compiled";
  }
}

// Compiled inference on the GPU freezes parameters: what they alone determine (batch norms' scales
// and shifts, autocast's 16-bit weights in channels-last order) runs once in a constant graph,
// again only after one of them changed, and the results follow the change.
TEST(CudaModels, InferenceFreezesParametersAndFollowsTheirChanges) {
  REQUIRE_GPU();
  manual_seed(8);
  const Tensor x = gpu(randn({2, 3, 32, 32}));
  for (bool half : {false, true}) {
    SCOPED_TRACE(half ? "bfloat16 autocast" : "float32");
    auto model = on_gpu(small_resnet18, 7);
    model->eval();
    autograd::NoGradGuard no_grad;
    std::optional<autocast> amp;
    if (half) amp.emplace(Device::cuda(), DType::BFloat16);
    const double tol = half ? 5e-2 : 1e-4;
    testing::LogCapture logs("aot_graphs,perf_hints");
    auto compiled = compile(model);
    EXPECT_TRUE(all_close(cpu((*compiled)(x)).to(DType::Float32),
                          cpu(model->forward(x)).to(DType::Float32), tol, tol));
    EXPECT_EQ(logs.count("frozen "), 1u) << logs.all();
    EXPECT_EQ(logs.count("runs again"), 0u) << logs.all();
    model->named_parameters().at("bn1.weight").mul_(0.5);
    EXPECT_TRUE(all_close(cpu((*compiled)(x)).to(DType::Float32),
                          cpu(model->forward(x)).to(DType::Float32), tol, tol));
    EXPECT_EQ(logs.count("runs again"), 1u) << logs.all();
  }
}

// SGD steps of `model` (on the GPU, compiled with `options` or not) against the same training on
// the CPU: losses, gradients, parameters and buffers after each step.
void expect_training_matches_cpu(const Workload& w, bool compiled,
                                 const CompileOptions& options = {}, int steps = 3) {
  manual_seed(11);
  auto reference = w.make();
  reference->to(DType::Float64);
  reference->train();
  auto model = on_gpu(w.make, 11);
  model->to(DType::Float64);
  model->train();
  std::shared_ptr<nn::Module> run = model;
  if (compiled) run = compile(model, options);
  optim::SGD reference_opt(reference->parameters(), {.lr = 0.05, .momentum = 0.9});
  optim::SGD opt(run->parameters(), {.lr = 0.05, .momentum = 0.9});
  manual_seed(12);
  Tensor input = w.input();
  if (input.is_floating_point()) input = input.to(DType::Float64);
  auto loss_of = [](const Tensor& out) { return (out * out).mean(); };
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(fmt::format("{} step {}", compiled ? options.mode : "eager", step));
    reference_opt.zero_grad();
    manual_seed(100 + step);
    Tensor want = loss_of(reference->forward(input));
    want.backward();
    opt.zero_grad();
    manual_seed(100 + step);
    Tensor got = loss_of(run->forward(gpu(input)));
    got.backward();
    EXPECT_TRUE(got.device().is_cuda());
    EXPECT_TRUE(all_close(cpu(got.detach()), want.detach(), w.rtol, 1e-12));
    const auto q = reference->named_parameters();
    for (const auto& [name, p] : model->named_parameters()) {
      ASSERT_EQ(p.grad().defined(), q.at(name).grad().defined()) << name;
      if (!p.grad().defined()) continue;
      EXPECT_TRUE(all_close(cpu(p.grad()), q.at(name).grad(), 10 * w.rtol, 1e-12)) << name;
    }
    reference_opt.step();
    opt.step();
    const auto b = reference->named_buffers();
    for (const auto& [name, buffer] : model->named_buffers()) {
      if (!buffer.defined()) continue;
      EXPECT_TRUE(all_close(cpu(buffer), b.at(name), w.rtol, 1e-12)) << name;
    }
  }
  const auto q = reference->named_parameters();
  for (const auto& [name, p] : model->named_parameters()) {
    EXPECT_TRUE(all_close(cpu(p.detach()), q.at(name).detach(), w.rtol, 1e-12)) << name;
  }
}

TEST(CudaModels, EagerTrainingMatchesTheCpu) {
  REQUIRE_GPU();
  for (const Workload& w : workloads()) {
    SCOPED_TRACE(w.name);
    expect_training_matches_cpu(w, /*compiled=*/false);
  }
}

TEST(CudaModels, CompiledTrainingMatchesTheCpu) {
  REQUIRE_GPU();
  for (const Workload& w : workloads()) {
    SCOPED_TRACE(w.name);
    expect_training_matches_cpu(w, /*compiled=*/true);
  }
}

// reduce-overhead replays CUDA graphs from the third call of each compiled graph (the forward
// and the backward): five steps run once normally, once captured and three times replayed.
// bert's and gpt2's forwards draw dropout masks: graphed, each replay reserves new counters from
// the generator, so the masks are the CPU's after the same manual_seed; with
// options{"cudagraphs": "false"} the same steps run without graphs.
TEST(CudaModels, ReduceOverheadTrainingMatchesTheCpu) {
  REQUIRE_GPU();
  for (const bool graphed : {true, false}) {
    CompileOptions options;
    options.mode = "reduce-overhead";
    if (!graphed) options.options["cudagraphs"] = "false";
    for (const Workload& w : workloads()) {
      SCOPED_TRACE(std::string(w.name) + (graphed ? "" : " (no CUDA graphs)"));
      expect_training_matches_cpu(w, /*compiled=*/true, options, /*steps=*/5);
    }
  }
}

}  // namespace
}  // namespace kiln
