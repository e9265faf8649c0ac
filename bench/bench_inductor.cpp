// BENCHMARKS.md's op workloads (CPU shapes) through the inductor beside kiln eager, inference,
// 2 threads: pointwise (y = sin(x)*cos(x) + exp(-x*x)*0.5 + tanh(x), 2^22 float32), softmax over
// the last dim of (2048, 4096), layer_norm with weight and bias over (2048, 4096). Named
// "<workload>/<eager|inductor>" (real time, ms); the kernels are compiled (or loaded from the code
// cache) before timing.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <functional>

namespace {

using kiln::Tensor;

Tensor pointwise(const Tensor& x) { return x.sin() * x.cos() + (-x * x).exp() * 0.5 + x.tanh(); }
Tensor softmax(const Tensor& x) { return x.softmax(-1); }
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b) {
  return kiln::layer_norm(x, {x.size(-1)}, w, b, 1e-5);
}

void run(benchmark::State& state, const std::function<Tensor()>& step) {
  kiln::set_num_threads(2);
  kiln::autograd::NoGradGuard no_grad;
  step();  // compile / warm up
  for (auto _ : state) {
    Tensor y = step();
    benchmark::DoNotOptimize(y.data_ptr());
  }
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
BENCHMARK_MAIN();
