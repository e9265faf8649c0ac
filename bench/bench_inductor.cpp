// BENCHMARKS.md's op workloads (CPU shapes) through the inductor beside kiln eager, inference,
// 2 threads: pointwise (y = sin(x)*cos(x) + exp(-x*x)*0.5 + tanh(x), 2^22 float32), softmax over
// the last dim of (2048, 4096), layer_norm with weight and bias over (2048, 4096); a
// Linear(1024, 1024) layer at batch 64 (the bias fused into the GEMM as an extern epilogue, or
// not: "inductor_unfused"); resnet18 eval inference at batch 8, 224x224 (frozen, or not:
// "inductor_unfrozen"; frozen without weight pre-packing: "inductor_unpacked"; "_cl": the
// input in channels-last). Named "<workload>/<variant>" (real time, ms); the kernels are
// compiled (or loaded from the code cache) before timing.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <sys/resource.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace {

using kiln::Tensor;

Tensor pointwise(const Tensor& x) { return x.sin() * x.cos() + (-x * x).exp() * 0.5 + x.tanh(); }
Tensor softmax(const Tensor& x) { return x.softmax(-1); }
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b) {
  return kiln::layer_norm(x, {x.size(-1)}, w, b, 1e-5);
}

// CPU seconds this process used so far, all threads.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// Besides real time, "cpu_ms": CPU time over all threads per iteration (with
// OMP_WAIT_POLICY=passive, the work done: a figure that other load on the machine disturbs less).
void run(benchmark::State& state, const std::function<Tensor()>& step) {
  kiln::set_num_threads(2);
  kiln::autograd::NoGradGuard no_grad;
  step();  // compile / warm up
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    Tensor y = step();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["cpu_ms"] = (process_cpu_seconds() - cpu_start) * 1e3 /
                             static_cast<double>(std::max<int64_t>(state.iterations(), 1));
}

const kiln::CompileOptions kInductor{.backend = std::string("inductor")};

void pointwise_eager(benchmark::State& s) {
  const Tensor x = kiln::randn({1 << 22});
  run(s, [&] { return pointwise(x); });
}
void pointwise_inductor(benchmark::State& s) {
  const Tensor x = kiln::randn({1 << 22});
  auto f = kiln::compile([](const Tensor& x) { return pointwise(x); }, kInductor);
  run(s, [&] { return f(x); });
}
void softmax_eager(benchmark::State& s) {
  const Tensor x = kiln::randn({2048, 4096});
  run(s, [&] { return softmax(x); });
}
void softmax_inductor(benchmark::State& s) {
  const Tensor x = kiln::randn({2048, 4096});
  auto f = kiln::compile([](const Tensor& x) { return softmax(x); }, kInductor);
  run(s, [&] { return f(x); });
}
void layernorm_eager(benchmark::State& s) {
  const Tensor x = kiln::randn({2048, 4096}), w = kiln::randn({4096}), b = kiln::randn({4096});
  run(s, [&] { return layer_norm(x, w, b); });
}
void layernorm_inductor(benchmark::State& s) {
  const Tensor x = kiln::randn({2048, 4096}), w = kiln::randn({4096}), b = kiln::randn({4096});
  auto f = kiln::compile(
      [](const Tensor& x, const Tensor& w, const Tensor& b) { return layer_norm(x, w, b); },
      kInductor);
  run(s, [&] { return f(x, w, b); });
}

void linear_eager(benchmark::State& s) {
  auto layer = std::make_shared<kiln::nn::Linear>(1024, 1024);
  const Tensor x = kiln::randn({64, 1024});
  run(s, [&] { return layer->forward(x); });
}
void linear_compiled(benchmark::State& s, std::map<std::string, std::string> options) {
  auto layer = std::make_shared<kiln::nn::Linear>(1024, 1024);
  auto f = kiln::compile(layer, {.backend = std::string("inductor"), .options = options});
  const Tensor x = kiln::randn({64, 1024});
  run(s, [&] { return (*f)(x); });
}
void linear_inductor(benchmark::State& s) { linear_compiled(s, {}); }
void linear_inductor_unfused(benchmark::State& s) {
  linear_compiled(s, {{"extern_epilogues", "false"}, {"freezing", "false"}});
}

void resnet18_eager(benchmark::State& s) {
  auto model = kiln::models::resnet18();
  model->eval();
  const Tensor x = kiln::randn({8, 3, 224, 224});
  run(s, [&] { return model->forward(x); });
}
void resnet18_compiled(benchmark::State& s, std::map<std::string, std::string> options) {
  auto model = kiln::models::resnet18();
  model->eval();
  auto f = kiln::compile(model, {.backend = std::string("inductor"), .options = options});
  const Tensor x = kiln::randn({8, 3, 224, 224});
  run(s, [&] { return (*f)(x); });
}
void resnet18_inductor(benchmark::State& s) { resnet18_compiled(s, {}); }
void resnet18_eager_cl(benchmark::State& s) {
  auto model = kiln::models::resnet18();
  model->eval();
  const Tensor x = kiln::randn({8, 3, 224, 224}).contiguous(kiln::MemoryFormat::ChannelsLast);
  run(s, [&] { return model->forward(x); });
}
void resnet18_inductor_cl(benchmark::State& s) {
  auto model = kiln::models::resnet18();
  model->eval();
  auto f = kiln::compile(model, {.backend = std::string("inductor")});
  const Tensor x = kiln::randn({8, 3, 224, 224}).contiguous(kiln::MemoryFormat::ChannelsLast);
  run(s, [&] { return (*f)(x); });
}
BENCHMARK(resnet18_eager_cl)
    ->Name("resnet18/eager_cl")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(resnet18_inductor_cl)
    ->Name("resnet18/inductor_cl")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
void resnet18_inductor_unpacked(benchmark::State& s) {
  resnet18_compiled(s, {{"prepack_weights", "false"}});
}
void resnet18_inductor_unfrozen(benchmark::State& s) {
  resnet18_compiled(s, {{"freezing", "false"}});
}

}  // namespace

BENCHMARK(pointwise_eager)->Name("pointwise/eager")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(pointwise_inductor)
    ->Name("pointwise/inductor")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(softmax_eager)->Name("softmax/eager")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(softmax_inductor)->Name("softmax/inductor")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(layernorm_eager)->Name("layernorm/eager")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(layernorm_inductor)
    ->Name("layernorm/inductor")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(linear_eager)->Name("linear/eager")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(linear_inductor)->Name("linear/inductor")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(linear_inductor_unfused)
    ->Name("linear/inductor_unfused")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(resnet18_eager)->Name("resnet18/eager")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(resnet18_inductor)
    ->Name("resnet18/inductor")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(resnet18_inductor_unpacked)
    ->Name("resnet18/inductor_unpacked")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(resnet18_inductor_unfrozen)
    ->Name("resnet18/inductor_unfrozen")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
