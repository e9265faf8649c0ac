// Normalization and pooling throughput, float32:
//   BM_layer_norm/2048x4096       layer_norm over the last dim, with weight and bias
//   BM_rms_norm/2048x4096         rms_norm over the last dim, with weight
//   BM_batch_norm/8x64x56x56      batch_norm in training mode (batch statistics, running stats)
//   BM_max_pool2d/8x64x112x112    max_pool2d, kernel 3, stride 2, padding 1
// each on 1 and 2 threads ("/t<threads>"; Google Benchmark appends "/real_time").
// bytes_per_second counts one read of the input and one write of the output.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <cstdint>

namespace {

void set_bytes(benchmark::State& state, const kiln::Tensor& in, const kiln::Tensor& out) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(in.nbytes() + out.nbytes()));
}

void layer_norm(benchmark::State& state) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({2048, 4096});
  kiln::Tensor w = kiln::randn({4096}), b = kiln::randn({4096});
  kiln::Tensor y;
  for (auto _ : state) {
    y = kiln::layer_norm(x, {4096}, w, b, 1e-5);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_bytes(state, x, y);
}

void rms_norm(benchmark::State& state) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({2048, 4096});
  kiln::Tensor w = kiln::randn({4096});
  kiln::Tensor y;
  for (auto _ : state) {
    y = kiln::rms_norm(x, {4096}, w, 1e-6);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_bytes(state, x, y);
}

void batch_norm(benchmark::State& state) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({8, 64, 56, 56});
  kiln::Tensor w = kiln::randn({64}), b = kiln::randn({64});
  kiln::Tensor rm = kiln::zeros({64}), rv = kiln::ones({64});
  kiln::Tensor y;
  for (auto _ : state) {
    y = kiln::batch_norm(x, w, b, rm, rv, /*training=*/true, 0.1, 1e-5);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_bytes(state, x, y);
}

void max_pool2d(benchmark::State& state) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({8, 64, 112, 112});
  kiln::Tensor y;
  for (auto _ : state) {
    y = kiln::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_bytes(state, x, y);
}

}  // namespace

BENCHMARK(layer_norm)
    ->Name("BM_layer_norm/2048x4096")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rms_norm)
    ->Name("BM_rms_norm/2048x4096")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(batch_norm)
    ->Name("BM_batch_norm/8x64x56x56")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(max_pool2d)
    ->Name("BM_max_pool2d/8x64x112x112")
    ->ArgName("t")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
