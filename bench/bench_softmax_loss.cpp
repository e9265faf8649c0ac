// softmax / log_softmax of a (2048, 4096) float32 tensor along the last dim, and cross_entropy of
// (4096, 1000) float32 logits against int64 class indices with reduction mean. Named
// "BM_<op>/<shape>/t:<threads>"; bytes counters count the input read and the output written.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>
#include <kiln/ops/loss.h>

#include <cstdint>

namespace {

constexpr int64_t kRows = 2048, kCols = 4096;
constexpr int64_t kBatch = 4096, kClasses = 1000;

void run_softmax(benchmark::State& state, bool log) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({kRows, kCols});
  for (auto _ : state) {
    kiln::Tensor y = log ? kiln::log_softmax(x, -1) : kiln::softmax(x, -1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 2 * int64_t{sizeof(float)});
}

void run_cross_entropy(benchmark::State& state) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor logits = kiln::randn({kBatch, kClasses});
  kiln::Tensor target = kiln::randint(kClasses, {kBatch});
  for (auto _ : state) {
    kiln::Tensor loss = kiln::cross_entropy(logits, target);
    benchmark::DoNotOptimize(loss.data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * kBatch * kClasses);
  state.SetBytesProcessed(state.iterations() * kBatch * kClasses * int64_t{sizeof(float)});
}

}  // namespace

BENCHMARK_CAPTURE(run_softmax, softmax, false)
    ->Name("BM_softmax/2048x4096")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_softmax, log_softmax, true)
    ->Name("BM_log_softmax/2048x4096")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(run_cross_entropy)
    ->Name("BM_cross_entropy/4096x1000")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
