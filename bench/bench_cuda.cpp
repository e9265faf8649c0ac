// The memory-bound GPU workloads of ../shared/BENCHMARKS.md at their GPU shapes, float32, on
// cuda:0: kiln eager (hand-written or generated kernels) and kiln compiled (the inductor's CUDA
// kernels), beside a device-to-device copy of the same bytes (the bandwidth the 85% target
// refers to). Times are CUDA event times per call (UseManualTime); bytes_per_second counts one
// read of each input and one write of the output. bench/compare_torch_cuda.py measures PyTorch
// eager and torch.compile on the same shapes. Without a GPU every benchmark is skipped.
//   BM_copy/<bytes of the pointwise input>
//   BM_permute_copy                 BERT's head split: (16, 128, 12, 64) made (16, 12, 128, 64)
//                                   contiguous (a strided copy of 2^24 bytes)
//   BM_pointwise_{eager,compiled}   y = sin(x)*cos(x) + exp(-x*x)*0.5 + tanh(x), 2^24 elements
//   BM_softmax_{eager,compiled}     softmax over the last dim of (8192, 4096)
//   BM_layernorm_{eager,compiled}   layer_norm over the last dim of (8192, 4096), weight and bias
#include <benchmark/benchmark.h>
#include <kiln/cuda/cuda.h>
#include <kiln/kiln.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace {

using kiln::Tensor;

Tensor on_gpu(kiln::IntList sizes, uint64_t seed) {
  kiln::manual_seed(seed);
  return kiln::randn(sizes).to(kiln::Device::cuda());
}

// Times `step` with CUDA events around each call; `bytes` per call.
void run(benchmark::State& state, const std::function<Tensor()>& step, int64_t bytes) {
  for (int i = 0; i < 3; ++i) step();  // compilation, allocator warm-up
  kiln::cuda::synchronize();
  kiln::cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
  for (auto _ : state) {
    start.record();
    Tensor y = step();
    stop.record();
    stop.synchronize();
    state.SetIterationTime(start.elapsed_ms(stop) / 1000.0);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}

Tensor pointwise(const Tensor& x) { return x.sin() * x.cos() + (-x * x).exp() * 0.5 + x.tanh(); }

constexpr int64_t kPointwise = int64_t{1} << 24;
constexpr int64_t kRows = 8192, kColumns = 4096;

void copy(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kPointwise}, 1);
  run(
      state, [&] { return x.clone(); }, 2 * x.nbytes());
}

void permute_copy(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({16, 128, 12, 64}, 1);
  run(
      state, [&] { return x.transpose(1, 2).contiguous(); }, 2 * x.nbytes());
}

void pointwise_eager(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kPointwise}, 1);
  run(
      state, [&] { return pointwise(x); }, 2 * x.nbytes());
}

void pointwise_compiled(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kPointwise}, 1);
  auto f = kiln::compile([](const Tensor& t) { return pointwise(t); });
  run(
      state, [&] { return f(x); }, 2 * x.nbytes());
}

void softmax_eager(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kRows, kColumns}, 2);
  run(
      state, [&] { return kiln::softmax(x, -1); }, 2 * x.nbytes());
}

void softmax_compiled(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kRows, kColumns}, 2);
  auto f = kiln::compile([](const Tensor& t) { return kiln::softmax(t, -1); });
  run(
      state, [&] { return f(x); }, 2 * x.nbytes());
}

void layernorm_eager(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kRows, kColumns}, 3);
  const Tensor w = on_gpu({kColumns}, 4), b = on_gpu({kColumns}, 5);
  run(
      state, [&] { return kiln::layer_norm(x, {kColumns}, w, b, 1e-5); }, 2 * x.nbytes());
}

void layernorm_compiled(benchmark::State& state) {
  if (!kiln::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const Tensor x = on_gpu({kRows, kColumns}, 3);
  const Tensor w = on_gpu({kColumns}, 4), b = on_gpu({kColumns}, 5);
  auto f = kiln::compile([](const Tensor& t, const Tensor& wt, const Tensor& bt) {
    return kiln::layer_norm(t, {kColumns}, wt, bt, 1e-5);
  });
  run(
      state, [&] { return f(x, w, b); }, 2 * x.nbytes());
}

}  // namespace

BENCHMARK(copy)->Name("BM_copy")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(permute_copy)->Name("BM_permute_copy")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(pointwise_eager)
    ->Name("BM_pointwise_eager")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(pointwise_compiled)
    ->Name("BM_pointwise_compiled")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(softmax_eager)->Name("BM_softmax_eager")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(softmax_compiled)
    ->Name("BM_softmax_compiled")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(layernorm_eager)
    ->Name("BM_layernorm_eager")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(layernorm_compiled)
    ->Name("BM_layernorm_compiled")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
