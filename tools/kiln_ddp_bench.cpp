// kiln_ddp_bench: data-parallel training throughput of BENCHMARKS.md's resnet18 and bert training
// steps, one rank per GPU (nccl) or per process on the CPU (gloo), eager or compiled, to set N
// ranks beside one. Every rank trains its own batch of the workload's per-device shape (weak
// scaling, as PyTorch's DDP figures are quoted); rank 0 prints the median step time over rounds
// and the global samples per second, and writes them as JSON.
//
//   kiln run --nproc-per-node 2 kiln_ddp_bench --workload resnet18 --device cuda [--compiled]
//   kiln_ddp_bench --workload resnet18 --device cuda          # one rank, the model without DDP
//
// bench/ddp_torch.py measures PyTorch's DDP the same way (torchrun).
#include <kiln/kiln.h>
#include <kiln/models/models.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bert_config.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace dist = kiln::distributed;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using ModulePtr = std::shared_ptr<kiln::nn::Module>;

struct Options {
  std::string workload = "resnet18";
  bool tiny = false;  // small models and batches: the CI smoke run
  std::string device = "cuda";
  bool compiled = false;
  std::string autocast = "none";
  bool ddp_alone = false;  // DDP even with one rank (its overhead)
  double bucket_cap_mb = 25;
  int warmup = 3;
  int steps = 10;
  int rounds = 5;
  int threads = 0;
  std::string json;
};

struct Workload {
  ModulePtr model;
  Tensor input, target;
  std::shared_ptr<kiln::optim::Optimizer> optimizer;
  int64_t batch = 0;
};

// The workload at BENCHMARKS.md's shape for the device (GPU: resnet18 batch 32, bert batch 16 of
// 128 tokens; CPU: 8 and 4), this rank's own random batch.
Workload make_workload(const Options& options, kiln::Device device, int rank) {
  const bool gpu = device.is_cuda();
  Workload w;
  kiln::manual_seed(0);
  if (options.workload == "resnet18") {
    const int64_t classes = options.tiny ? 10 : 1000, side = options.tiny ? 64 : 224;
    w.model = options.tiny ? std::make_shared<kiln::models::ResNet>(kiln::models::ResNetConfig{
                                 .layers = {1, 1, 1, 1}, .num_classes = classes})
                           : kiln::models::resnet18();
    w.batch = options.tiny ? 2 : gpu ? 32 : 8;
    kiln::manual_seed(1 + rank);
    w.input = kiln::randn({w.batch, 3, side, side});
    w.target = kiln::randint(0, classes, {w.batch}, kiln::kInt64);
  } else if (options.workload == "bert") {
    // BERT-base, or kiln_bench's tiny one.
    const kiln::models::BertConfig config =
        kiln_bench::bert_config(options.tiny ? kiln_bench::Shapes::tiny : kiln_bench::Shapes::full);
    w.model = kiln::models::bert_for_sequence_classification(config);
    w.batch = options.tiny ? 2 : gpu ? 16 : 4;
    kiln::manual_seed(1 + rank);
    w.input = kiln::randint(0, config.vocab_size, {w.batch, options.tiny ? 8 : 128}, kiln::kInt64);
    w.target = kiln::randint(0, 2, {w.batch}, kiln::kInt64);
  } else {
    throw CLI::ValidationError("--workload", "expected resnet18 or bert, got " + options.workload);
  }
  w.model->to(device);
  w.model->train();
  w.input = w.input.to(device);
  w.target = w.target.to(device);
  if (options.workload == "resnet18") {
    w.optimizer = std::make_shared<kiln::optim::SGD>(
        w.model->parameters(), kiln::optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  } else {
    w.optimizer = std::make_shared<kiln::optim::AdamW>(w.model->parameters(),
                                                       kiln::optim::AdamWOptions{.lr = 2e-5});
  }
  return w;
}

void synchronize(kiln::Device device) {
  if (device.is_cuda()) kiln::cuda::synchronize(device.index());
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int run(const Options& options) {
  const bool distributed = std::getenv("WORLD_SIZE") != nullptr;
  const bool gpu = options.device == "cuda";
  if (options.threads > 0) kiln::set_num_threads(options.threads);
  int rank = 0, world = 1, local_rank = 0;
  if (distributed) {
    dist::InitOptions init;
    init.backend = gpu ? "nccl" : "gloo";
    init.timeout = std::chrono::minutes(5);
    dist::init_process_group(init);
    rank = dist::get_rank();
    world = dist::get_world_size();
    local_rank = dist::get_local_rank();
  }
  const kiln::Device device = gpu ? kiln::Device::cuda(local_rank) : kiln::kCPU;
  if (gpu) {
    // As kiln_bench and bench/ddp_torch.py: full float32 (no TF32), cuDNN's algorithms timed.
    kiln::cuda::set_device(local_rank);
    kiln::cuda::set_cudnn_allow_tf32(false);
    kiln::cuda::set_cudnn_benchmark(true);
  }
  Workload w = make_workload(options, device, rank);

  ModulePtr runner = w.model;
  std::shared_ptr<kiln::nn::DistributedDataParallel> ddp;
  if (distributed && (world > 1 || options.ddp_alone)) {
    kiln::nn::DistributedDataParallelOptions ddp_options;
    ddp_options.bucket_cap_mb = options.bucket_cap_mb;
    ddp = std::make_shared<kiln::nn::DistributedDataParallel>(w.model, ddp_options);
    runner = options.compiled ? kiln::compile(ddp) : ddp;
  } else if (options.compiled) {
    runner = kiln::compile(w.model);
  }
  std::optional<kiln::DType> autocast;
  if (options.autocast == "bfloat16") autocast = kiln::kBFloat16;
  if (options.autocast == "float16") autocast = kiln::kFloat16;

  auto step = [&] {
    w.optimizer->zero_grad();
    Tensor loss;
    {
      std::optional<kiln::autocast> region;
      if (autocast) region.emplace(device, *autocast);
      loss = F::cross_entropy((*runner)(w.input), w.target);
    }
    loss.backward();
    w.optimizer->step();
  };

  const auto compile_start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.warmup; ++i) step();
  synchronize(device);
  const double warmup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  std::vector<double> step_ms;
  for (int round = 0; round < options.rounds; ++round) {
    if (distributed) dist::barrier();
    synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.steps; ++i) step();
    synchronize(device);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count() /
        options.steps;
    step_ms.push_back(ms);
  }
  const double ms = median(step_ms);
  const double samples_per_s = static_cast<double>(w.batch) * world * 1000.0 / ms;
  if (rank == 0) {
    std::printf(
        "%s train, %s, %d rank%s (%s), %s%s: %.2f ms/step (median of %d rounds of %d), "
        "%.1f samples/s, warm-up %.1f s\n",
        options.workload.c_str(), options.device.c_str(), world, world == 1 ? "" : "s",
        ddp ? "DDP" : "no DDP", options.compiled ? "compiled" : "eager",
        autocast ? (", autocast " + options.autocast).c_str() : "", ms, options.rounds,
        options.steps, samples_per_s, warmup_s);
    if (!options.json.empty()) {
      nlohmann::json row = {{"side", "kiln"},
                            {"workload", options.workload},
                            {"device", options.device},
                            {"world_size", world},
                            {"ddp", ddp != nullptr},
                            {"compiled", options.compiled},
                            {"autocast", options.autocast},
                            {"batch_per_rank", w.batch},
                            {"step_ms", ms},
                            {"step_ms_rounds", step_ms},
                            {"samples_per_s", samples_per_s},
                            {"warmup_s", warmup_s}};
      std::ofstream(options.json, std::ios::app) << row.dump() << '\n';
    }
  }
  runner.reset();
  ddp.reset();
  if (distributed) dist::destroy_process_group();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"kiln_ddp_bench: data-parallel training throughput (one rank per GPU or process)"};
  app.add_option("--workload", options.workload, "resnet18 or bert")
      ->check(CLI::IsMember({"resnet18", "bert"}));
  app.add_flag("--tiny", options.tiny, "Small models and batches (a smoke run)");
  app.add_option("--device", options.device, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}));
  app.add_flag("--compiled", options.compiled, "kiln::compile the model (DDP: kiln::compile(ddp))");
  app.add_option("--autocast", options.autocast, "none, bfloat16 or float16")
      ->check(CLI::IsMember({"none", "bfloat16", "float16"}));
  app.add_flag("--ddp-alone", options.ddp_alone, "Wrap in DDP even with one rank");
  app.add_option("--bucket-cap-mb", options.bucket_cap_mb, "DDP's bucket size (MiB)");
  app.add_option("--warmup", options.warmup, "Untimed steps first (compilation included)");
  app.add_option("--steps", options.steps, "Steps per timed round");
  app.add_option("--rounds", options.rounds, "Timed rounds (the median is reported)");
  app.add_option("--threads", options.threads, "CPU threads per rank (0: kiln's default)");
  app.add_option("--json", options.json, "Append rank 0's result as a JSON line to this file");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_ddp_bench: %s\n", e.what());
    return 1;
  }
}
