// The model workloads of BENCHMARKS.md: mlp, resnet18 and bert (inference and one training step),
// gpt2 (inference). The eager and the compiled side each get their own model and optimizer, built
// from the same seed, so that their first steps start from identical state.
#include <kiln/kiln.h>
#include <kiln/models/models.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bert_config.h"
#include "case.h"

namespace kiln_bench {
namespace {

namespace F = kiln::nn::functional;
using kiln::nn::Module;
using ModulePtr = std::shared_ptr<Module>;
using OptimizerPtr = std::shared_ptr<kiln::optim::Optimizer>;

// A model and its loss as one Module, so that compile() captures forward and loss as one graph
// (PyTorch's benchmarks compile the same span).
class WithLoss : public Module {
 public:
  using LossFn = std::function<Tensor(const Tensor& output, const Tensor& target)>;
  WithLoss(ModulePtr model, LossFn loss)
      : Module("WithLoss"),
        model_(register_module("model", std::move(model))),
        loss_(std::move(loss)) {}
  Tensor forward(const Tensor& input, const Tensor& target) {
    return loss_(model_->forward(input), target);
  }
  using Module::forward;

 private:
  ModulePtr model_;
  LossFn loss_;
};

// What a model workload is made of: a way to build the model (called once per side, after
// seeding), its input and target (on the CPU), its loss and its optimizer.
struct ModelRecipe {
  std::function<ModulePtr(Shapes)> model;
  std::function<std::pair<Tensor, Tensor>(const Setup&)> input_and_target;
  WithLoss::LossFn loss;
  std::function<OptimizerPtr(const ModulePtr&)> optimizer;
};

// The model built on the CPU (so that the seed draws the same weights on both devices), then
// moved to the case's device in place.
ModulePtr seeded_model(const ModelRecipe& recipe, const Setup& setup) {
  kiln::manual_seed(0);
  ModulePtr model = recipe.model(setup.shapes);
  if (setup.on_gpu()) model->to(setup.device);
  return model;
}

std::pair<ModulePtr, ModulePtr> twin_models(const ModelRecipe& recipe, const Setup& setup) {
  ModulePtr eager = seeded_model(recipe, setup);
  ModulePtr compiled = seeded_model(recipe, setup);
  return {eager, compiled};
}

// The recipe's input and target, drawn on the CPU from seed 1, on the case's device.
std::pair<Tensor, Tensor> placed_data(const ModelRecipe& recipe, const Setup& setup) {
  kiln::manual_seed(1);
  const std::pair<Tensor, Tensor> data = recipe.input_and_target(setup);
  const auto place = [&setup](const Tensor& t) { return t.defined() ? setup.place(t) : t; };
  return {place(data.first), place(data.second)};
}

// The setup's autocast region (none when it has no autocast dtype).
std::optional<kiln::autocast> autocast_region(const Setup& setup) {
  if (!setup.autocast) return std::nullopt;
  return std::optional<kiln::autocast>(std::in_place, setup.device, *setup.autocast);
}

Step inference_step(const ModelRecipe& recipe, const kiln::CompileOptions& options,
                    const Setup& setup) {
  // Plain variables, not structured bindings: lambdas capture them (clang 14 cannot capture
  // bindings).
  const std::pair<ModulePtr, ModulePtr> models = twin_models(recipe, setup);
  const ModulePtr eager = models.first, plain = models.second;
  eager->eval();
  plain->eval();
  Tensor input = placed_data(recipe, setup).first;
  auto compiled = kiln::compile(plain, options);
  return {[eager, input, setup] {
            kiln::autograd::NoGradGuard no_grad;
            const auto region = autocast_region(setup);
            return std::vector<Tensor>{eager->forward(input)};
          },
          [compiled, input, setup] {
            kiln::autograd::NoGradGuard no_grad;
            const auto region = autocast_region(setup);
            return std::vector<Tensor>{(*compiled)(input)};
          }};
}

// One training step: zero_grad, forward and loss, backward, optimizer step. Returns the loss and
// the first parameter after the step. Seeded, so that dropout draws the same masks on both sides.
template <typename Run>
std::vector<Tensor> train_step(const OptimizerPtr& optimizer, const Tensor& first_parameter,
                               const Setup& setup, Run&& forward_and_loss) {
  kiln::manual_seed(2);
  optimizer->zero_grad();
  Tensor loss;
  {
    const auto region = autocast_region(setup);
    loss = forward_and_loss();
  }
  loss.backward();
  optimizer->step();
  return {loss.detach(), first_parameter.detach().clone()};
}

Step train_step_pair(const ModelRecipe& recipe, const kiln::CompileOptions& options,
                     const Setup& setup) {
  const std::pair<ModulePtr, ModulePtr> models = twin_models(recipe, setup);
  const ModulePtr eager_model = models.first, plain_model = models.second;
  eager_model->train();
  plain_model->train();
  const std::pair<Tensor, Tensor> data = placed_data(recipe, setup);
  const Tensor input = data.first, target = data.second;
  auto eager = std::make_shared<WithLoss>(eager_model, recipe.loss);
  auto compiled = kiln::compile(std::make_shared<WithLoss>(plain_model, recipe.loss), options);
  OptimizerPtr eager_opt = recipe.optimizer(eager_model);
  OptimizerPtr compiled_opt = recipe.optimizer(plain_model);
  Tensor eager_param = eager_model->parameters().front();
  Tensor compiled_param = plain_model->parameters().front();
  return {[=] {
            return train_step(eager_opt, eager_param, setup,
                              [&] { return eager->forward(input, target); });
          },
          [=] {
            return train_step(compiled_opt, compiled_param, setup,
                              [&] { return (*compiled)(input, target); });
          }};
}

Case model_case(std::string workload, std::string phase, double tolerance, ModelRecipe recipe) {
  const bool train = phase == "train";
  return {
      std::move(workload),
      std::move(phase),
      tolerance,
      false,
      [recipe = std::move(recipe), train](const kiln::CompileOptions& options, const Setup& setup) {
        return train ? train_step_pair(recipe, options, setup)
                     : inference_step(recipe, options, setup);
      },
      /*runs_on_gpu=*/true,
      /*autocasts=*/true};
}

// ---- the models; inputs at BENCHMARKS.md's CPU or GPU shapes, or tiny ----

ModelRecipe mlp_recipe() {
  return {[](Shapes shapes) -> ModulePtr {
            if (shapes == Shapes::full) return kiln::models::mlp();
            return kiln::models::mlp(
                {.in_features = 32, .hidden_features = {32, 32}, .out_features = 32});
          },
          [](const Setup& setup) {
            const int64_t batch = setup.size(2, 64, 256);
            const int64_t width = setup.tiny() ? 32 : 1024;
            return std::pair{kiln::randn({batch, width}), kiln::randn({batch, width})};
          },
          [](const Tensor& output, const Tensor& target) { return F::mse_loss(output, target); },
          [](const ModulePtr& model) -> OptimizerPtr {
            return std::make_shared<kiln::optim::SGD>(model->parameters(),
                                                      kiln::optim::SGDOptions{.lr = 0.01});
          }};
}

ModelRecipe resnet18_recipe() {
  return {
      [](Shapes shapes) -> ModulePtr {
        if (shapes == Shapes::full) return kiln::models::resnet18();
        return std::make_shared<kiln::models::ResNet>(
            kiln::models::ResNetConfig{.layers = {1, 1, 1, 1}, .num_classes = 10});
      },
      [](const Setup& setup) {
        // Tiny: batch 2 of 64x64 images, so that the last stage's training batch norm normalizes
        // 8 values per channel (at 32x32 it saw 2, and its output, +-1 whatever the inputs,
        // amplified rounding differences into the gradients past any fixed tolerance).
        const int64_t batch = setup.size(2, 8, 32), side = setup.tiny() ? 64 : 224;
        Tensor x = kiln::randn({batch, 3, side, side});
        Tensor labels = kiln::randint(0, setup.tiny() ? 10 : 1000, {batch}, kiln::kInt64);
        return std::pair{x, labels};
      },
      [](const Tensor& logits, const Tensor& labels) { return F::cross_entropy(logits, labels); },
      [](const ModulePtr& model) -> OptimizerPtr {
        return std::make_shared<kiln::optim::SGD>(
            model->parameters(), kiln::optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
      }};
}

ModelRecipe bert_recipe() {
  return {
      [](Shapes shapes) -> ModulePtr {
        return kiln::models::bert_for_sequence_classification(bert_config(shapes));
      },
      [](const Setup& setup) {
        const int64_t batch = setup.size(1, 4, 16), seq = setup.tiny() ? 8 : 128;
        Tensor ids =
            kiln::randint(0, bert_config(setup.shapes).vocab_size, {batch, seq}, kiln::kInt64);
        return std::pair{ids, kiln::randint(0, 2, {batch}, kiln::kInt64)};
      },
      // BertForSequenceClassification's loss for 2 labels: cross-entropy.
      [](const Tensor& logits, const Tensor& labels) { return F::cross_entropy(logits, labels); },
      [](const ModulePtr& model) -> OptimizerPtr {
        return std::make_shared<kiln::optim::AdamW>(model->parameters(),
                                                    kiln::optim::AdamWOptions{.lr = 2e-5});
      }};
}

ModelRecipe gpt2_recipe() {
  auto config = [](Shapes shapes) -> kiln::models::GPT2Config {
    if (shapes == Shapes::full) return {};  // GPT-2 small
    return {.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2};
  };
  return {
      [config](Shapes shapes) -> ModulePtr { return kiln::models::gpt2(config(shapes)); },
      [config](const Setup& setup) {
        const int64_t batch = setup.size(1, 1, 8), seq = setup.tiny() ? 8 : 256;
        Tensor ids = kiln::randint(0, config(setup.shapes).vocab_size, {batch, seq}, kiln::kInt64);
        return std::pair{ids, Tensor()};
      },
      nullptr, nullptr};
}

}  // namespace

std::vector<Case> model_cases() {
  // Whole models accumulate rounding differences over many layers (training steps also over the
  // backward pass, through batch norms over few values per channel at tiny shapes): looser
  // tolerances than single ops.
  return {model_case("mlp", "inference", 1e-4, mlp_recipe()),
          model_case("mlp", "train", 1e-4, mlp_recipe()),
          model_case("resnet18", "inference", 1e-3, resnet18_recipe()),
          model_case("resnet18", "train", 1e-3, resnet18_recipe()),
          model_case("bert", "inference", 1e-3, bert_recipe()),
          model_case("bert", "train", 1e-3, bert_recipe()),
          model_case("gpt2", "inference", 1e-3, gpt2_recipe())};
}

}  // namespace kiln_bench
