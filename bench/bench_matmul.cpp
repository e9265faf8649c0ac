// GEMM throughput: 1024 x 1024 x 1024 float32 mm through OpenBLAS, reported as GFLOP/s
// (2 * m * n * k floating-point operations per product). Named "mm/<layout>/t<threads>";
// layout "transposed" multiplies by the transposed (column-major) view, which maps onto cblas's
// transpose flag rather than a copy. A batched case times many small products
// ("bmm/256x64x64x64/t<threads>"), the regime where kiln parallelizes over the batch.
// "linear/<m>x<n>x<k>/t<threads>" is F.linear(x [m, k], weight [n, k], bias [n]) at the model
// workloads' layer shapes (mlp batch 64, bert batch 4 x seq 128, gpt2 seq 256).
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <array>
#include <cstdint>

namespace {

constexpr int64_t kSide = 1024;

void run_mm(benchmark::State& state, bool transposed) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor a = kiln::randn({kSide, kSide});
  kiln::Tensor b = kiln::randn({kSide, kSide});
  if (transposed) b = b.t();
  for (auto _ : state) {
    kiln::Tensor c = kiln::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  const double flops = 2.0 * kSide * kSide * kSide;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void run_bmm(benchmark::State& state) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor a = kiln::randn({256, 64, 64});
  kiln::Tensor b = kiln::randn({256, 64, 64});
  for (auto _ : state) {
    kiln::Tensor c = kiln::bmm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  const double flops = 2.0 * 256 * 64 * 64 * 64;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// F.linear(x, weight, bias) with x [m, k], weight [n, k]: m, n, k from the benchmark's args.
void run_linear(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  kiln::set_num_threads(static_cast<int>(state.range(3)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({m, k});
  kiln::Tensor w = kiln::randn({n, k});
  kiln::Tensor bias = kiln::randn({n});
  for (auto _ : state) {
    kiln::Tensor y = kiln::linear(x, w, bias);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// Names "linear/<m>x<n>x<k>/t:<threads>" like the other cases.
void linear_args(benchmark::internal::Benchmark* b) {
  for (auto [m, n, k] : {std::array<int64_t, 3>{64, 1024, 1024},
                         {512, 768, 768},
                         {512, 3072, 768},
                         {512, 768, 3072},
                         {256, 2304, 768}}) {
    for (int64_t threads : {1, 2}) b->Args({m, n, k, threads});
  }
}

}  // namespace

BENCHMARK_CAPTURE(run_mm, mm / contiguous, false)
    ->Name("mm/contiguous")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_mm, mm / transposed, true)
    ->Name("mm/transposed")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(run_bmm)
    ->Name("bmm/256x64x64x64")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(run_linear)
    ->Name("linear")
    ->ArgNames({"m", "n", "k", "t"})
    ->Apply(linear_args)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
