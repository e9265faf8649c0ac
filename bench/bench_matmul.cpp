// GEMM throughput: 1024 x 1024 x 1024 float32 mm through OpenBLAS, reported as GFLOP/s
// (2 * m * n * k floating-point operations per product). Named "mm/<layout>/t<threads>";
// layout "transposed" multiplies by the transposed (column-major) view, which maps onto cblas's
// transpose flag rather than a copy. A batched case times many small products
// ("bmm/256x64x64x64/t<threads>"), the regime where kiln parallelizes over the batch.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

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

BENCHMARK_MAIN();
