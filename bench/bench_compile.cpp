// Capture costs (BENCHMARKS.md `overhead`): a compiled function of one tiny op on a 16-element
// tensor on a cache hit ("overhead/compiled_add") beside the same op eagerly
// ("overhead/eager_add"); the per-call overhead is their difference. And the cost of capture
// itself: the first call of a compiled resnet18 / BERT-base (trace, eager backend, one run; caches
// reset before each) beside a cached call ("capture/<model>/first_call" vs
// "capture/<model>/cached_call").
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

namespace {

void eager_add(benchmark::State& state) {
  kiln::Tensor x = kiln::randn({16});
  kiln::Tensor y = kiln::randn({16});
  for (auto _ : state) {
    kiln::Tensor z = kiln::add(x, y);
    benchmark::DoNotOptimize(z.data_ptr());
  }
}

void compiled_add(benchmark::State& state) {
  kiln::Tensor x = kiln::randn({16});
  kiln::Tensor y = kiln::randn({16});
  auto f = kiln::compile([](const kiln::Tensor& a, const kiln::Tensor& b) { return a + b; });
  f(x, y);  // trace once
  for (auto _ : state) {
    kiln::Tensor z = f(x, y);
    benchmark::DoNotOptimize(z.data_ptr());
  }
}

template <typename M>
void model_call(benchmark::State& state, const std::shared_ptr<M>& model, const kiln::Tensor& input,
                bool first_call) {
  kiln::set_num_threads(2);
  model->eval();
  kiln::autograd::NoGradGuard no_grad;
  auto compiled = kiln::compile(model);
  (*compiled)(input);
  for (auto _ : state) {
    if (first_call) {
      state.PauseTiming();
      kiln::reset();
      state.ResumeTiming();
    }
    kiln::Tensor out = (*compiled)(input);
    benchmark::DoNotOptimize(out.data_ptr());
  }
}

void resnet18(benchmark::State& state) {
  kiln::manual_seed(0);
  model_call(state, kiln::models::resnet18(), kiln::randn({1, 3, 224, 224}), state.range(0) == 1);
}

void bert(benchmark::State& state) {
  kiln::manual_seed(0);
  model_call(state, kiln::models::bert(), kiln::randint(0, 30522, {1, 128}), state.range(0) == 1);
}

}  // namespace

BENCHMARK(eager_add)->Name("overhead/eager_add");
BENCHMARK(compiled_add)->Name("overhead/compiled_add");
BENCHMARK(resnet18)->Name("capture/resnet18/first_call")->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(resnet18)->Name("capture/resnet18/cached_call")->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(bert)->Name("capture/bert/first_call")->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(bert)->Name("capture/bert/cached_call")->Arg(0)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
