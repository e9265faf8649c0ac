// Elementwise and reduction micro-benchmarks on 2^22 float32 values (a 2048 x 2048 matrix), the
// workload bench/compare_torch.py times side by side with PyTorch.
//
// Benchmarks are named "<op>/<layout>/t<threads>", e.g. "add/contiguous/t1" or
// "exp/transposed/t2" (Google Benchmark appends "/real_time": wall time is measured, since the
// kernels run on a thread pool). Layout "transposed" runs the op on the transposed (non-contiguous)
// view of the matrix. "memcpy/contiguous/t<n>" copies the same bytes with std::memcpy split over n
// threads: the bandwidth reference for the memory-bound ops. Bytes per second count every byte
// an op must move: 2 reads + 1 write for add and mul, 1 read + 1 write for unary ops and memcpy,
// 1 read for reductions.
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int64_t kSide = 2048;
constexpr int64_t kNumel = kSide * kSide;  // 2^22
constexpr int64_t kBytes = kNumel * static_cast<int64_t>(sizeof(float));

// A 2048 x 2048 float32 matrix of values in [-1, 1) from a fixed LCG (deterministic, no
// dependence on the random ops), written through its raw memory.
kiln::Tensor make_matrix(uint32_t seed) {
  kiln::Tensor t = kiln::empty({kSide, kSide}, kiln::TensorOptions(kiln::kFloat32));
  float* p = t.data_ptr<float>();
  uint32_t state = seed;
  for (int64_t i = 0; i < kNumel; ++i) {
    state = state * 1664525u + 1013904223u;
    p[i] = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return t;
}

struct Inputs {
  kiln::Tensor a, b;
};

// The operands for a layout: the matrices themselves, or their transposed views.
Inputs inputs_for(bool transposed) {
  static const kiln::Tensor a = make_matrix(1);
  static const kiln::Tensor b = make_matrix(2);
  if (!transposed) return {a, b};
  return {a.transpose(0, 1), b.transpose(0, 1)};
}

using TensorOp = std::function<kiln::Tensor(const Inputs&)>;

void run_op(benchmark::State& state, const TensorOp& op, bool transposed, int threads,
            int64_t bytes_per_iteration) {
  kiln::set_num_threads(threads);
  Inputs in = inputs_for(transposed);
  for (auto _ : state) {
    kiln::Tensor out = op(in);
    benchmark::DoNotOptimize(out.data_ptr());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
  state.SetItemsProcessed(state.iterations() * kNumel);
}

// std::memcpy of kBytes, split into one contiguous chunk per thread.
void run_memcpy(benchmark::State& state, int threads) {
  kiln::set_num_threads(threads);
  std::vector<float> src(static_cast<size_t>(kNumel), 1.0f), dst(static_cast<size_t>(kNumel));
  const int64_t grain = kNumel / threads;
  for (auto _ : state) {
    kiln::parallel_for(0, kNumel, grain, [&](int64_t begin, int64_t end) {
      std::memcpy(dst.data() + begin, src.data() + begin,
                  static_cast<size_t>(end - begin) * sizeof(float));
    });
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBytes);
  state.SetItemsProcessed(state.iterations() * kNumel);
}

struct OpSpec {
  const char* name;
  TensorOp fn;
  int64_t bytes;  // bytes moved per call
};

std::vector<OpSpec> op_specs() {
  return {
      {"add", [](const Inputs& in) { return kiln::add(in.a, in.b); }, 3 * kBytes},
      {"mul", [](const Inputs& in) { return kiln::mul(in.a, in.b); }, 3 * kBytes},
      {"exp", [](const Inputs& in) { return kiln::exp(in.a); }, 2 * kBytes},
      {"tanh", [](const Inputs& in) { return kiln::tanh(in.a); }, 2 * kBytes},
      {"sum", [](const Inputs& in) { return kiln::sum(in.a); }, kBytes},
      {"amax", [](const Inputs& in) { return kiln::amax(in.a); }, kBytes},
  };
}

void register_all() {
  for (int threads : {1, 2}) {
    const std::string suffix = "/t" + std::to_string(threads);
    benchmark::RegisterBenchmark(("memcpy/contiguous" + suffix).c_str(),
                                 [threads](benchmark::State& s) { run_memcpy(s, threads); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    for (const OpSpec& spec : op_specs()) {
      for (bool transposed : {false, true}) {
        std::string name =
            std::string(spec.name) + (transposed ? "/transposed" : "/contiguous") + suffix;
        benchmark::RegisterBenchmark(name.c_str(),
                                     [spec, transposed, threads](benchmark::State& s) {
                                       run_op(s, spec.fn, transposed, threads, spec.bytes);
                                     })
            ->UseRealTime()  // the kernels run on a thread pool: wall time is what counts
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
