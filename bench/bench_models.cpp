// Eager inference and one training step of BENCHMARKS.md's model workloads at its CPU shapes:
//   mlp       Linear(1024,1024) -> GELU -> Linear -> GELU -> Linear, batch 64; train: MSE against
//             a fixed random target, SGD (lr 0.01)
//   resnet18  torchvision's ResNet-18, batch 8, 3x224x224, 1000 classes; inference in eval mode;
//             train: cross-entropy on fixed random labels, SGD (lr 0.01, momentum 0.9)
//   bert      BERT-base BertForSequenceClassification (2 labels), batch 4, seq 128; inference in
//             eval mode; train: dropout 0.1, cross-entropy on fixed random labels, AdamW (lr 2e-5)
//   gpt2      GPT-2 small LM head, batch 1, seq 256, inference in eval mode
// Named "<workload>/<phase>/t:<threads>" (real time, ms). A training step is zero_grad, forward,
// loss, backward, optimizer step. Weights are random (seeded). Every benchmark runs one untimed
// step first, so the timed steps see a warm allocator and (for training) existing optimizer
// state. bench/compare_torch_models.py runs these beside PyTorch.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>
#include <kiln/models/models.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace F = kiln::nn::functional;
using kiln::Tensor;

// One workload's model, inputs and steps; built once per process (building BERT or GPT-2 takes
// longer than a step, and Google Benchmark calls a benchmark once per repetition).
struct Workload {
  std::shared_ptr<kiln::nn::Module> model;
  std::function<Tensor()> infer;
  std::function<void()> train_step;
};

Workload make_mlp() {
  kiln::manual_seed(0);
  auto model = kiln::models::mlp();
  Tensor x = kiln::randn({64, 1024});
  Tensor target = kiln::randn({64, 1024});
  auto sgd =
      std::make_shared<kiln::optim::SGD>(model->parameters(), kiln::optim::SGDOptions{.lr = 0.01});
  return {model, [model, x] { return model->forward(x); },
          [model, x, target, sgd] {
            sgd->zero_grad();
            F::mse_loss(model->forward(x), target).backward();
            sgd->step();
          }};
}

Workload make_resnet18() {
  kiln::manual_seed(0);
  auto model = kiln::models::resnet18();
  Tensor x = kiln::randn({8, 3, 224, 224});
  Tensor labels = kiln::randint(0, 1000, {8}, kiln::kInt64);
  auto sgd = std::make_shared<kiln::optim::SGD>(
      model->parameters(), kiln::optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  return {model, [model, x] { return model->forward(x); },
          [model, x, labels, sgd] {
            sgd->zero_grad();
            F::cross_entropy(model->forward(x), labels).backward();
            sgd->step();
          }};
}

Workload make_bert() {
  kiln::manual_seed(0);
  auto model = kiln::models::bert_for_sequence_classification();  // BERT-base, 2 labels
  Tensor ids = kiln::randint(0, model->bert->config.vocab_size, {4, 128}, kiln::kInt64);
  Tensor labels = kiln::randint(0, 2, {4}, kiln::kInt64);
  auto adamw = std::make_shared<kiln::optim::AdamW>(model->parameters(),
                                                    kiln::optim::AdamWOptions{.lr = 2e-5});
  return {model, [model, ids] { return model->forward(ids); },
          [model, ids, labels, adamw] {
            adamw->zero_grad();
            model->loss(model->forward(ids), labels).backward();
            adamw->step();
          }};
}

Workload make_gpt2() {
  kiln::manual_seed(0);
  auto model = kiln::models::gpt2();  // GPT-2 small
  Tensor ids = kiln::randint(0, model->config.vocab_size, {1, 256}, kiln::kInt64);
  return {model, [model, ids] { return model->forward(ids); }, nullptr};
}

Workload& workload(const std::string& name) {
  static std::map<std::string, Workload> built;
  auto it = built.find(name);
  if (it != built.end()) return it->second;
  Workload w = name == "mlp"        ? make_mlp()
               : name == "resnet18" ? make_resnet18()
               : name == "bert"     ? make_bert()
                                    : make_gpt2();
  return built.emplace(name, std::move(w)).first->second;
}

void run_inference(benchmark::State& state, const std::string& name) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  Workload& w = workload(name);
  w.model->eval();
  kiln::autograd::InferenceMode inference;
  benchmark::DoNotOptimize(w.infer().data_ptr());  // warm-up
  for (auto _ : state) {
    Tensor y = w.infer();
    benchmark::DoNotOptimize(y.data_ptr());
  }
}

void run_train(benchmark::State& state, const std::string& name) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  Workload& w = workload(name);
  w.model->train();
  w.train_step();  // warm-up; creates the optimizer state
  for (auto _ : state) w.train_step();
}

#define KILN_MODEL_BENCH(fn, workload_name, phase)               \
  BENCHMARK_CAPTURE(fn, workload_name##_##phase, #workload_name) \
      ->Name(#workload_name "/" #phase)                          \
      ->ArgName("t")                                             \
      ->Arg(2)                                                   \
      ->UseRealTime()                                            \
      ->Unit(benchmark::kMillisecond)

KILN_MODEL_BENCH(run_inference, mlp, inference);
KILN_MODEL_BENCH(run_train, mlp, train);
KILN_MODEL_BENCH(run_inference, resnet18, inference);
KILN_MODEL_BENCH(run_train, resnet18, train);
KILN_MODEL_BENCH(run_inference, bert, inference);
KILN_MODEL_BENCH(run_train, bert, train);
KILN_MODEL_BENCH(run_inference, gpt2, inference);

}  // namespace

BENCHMARK_MAIN();
