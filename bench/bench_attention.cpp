// scaled_dot_product_attention on float32 [batch, heads, seq, 64] inputs (contiguous randn):
//   BM_sdpa/bert_base         batch 4, 12 heads, seq 128, head dim 64, no mask
//   BM_sdpa/bert_base_causal  the same with is_causal=True
//   BM_sdpa/long_2048         batch 1, 12 heads, seq 2048, head dim 64, no mask
//   BM_sdpa/long_2048_causal  the same with is_causal=True
// each on t = 1 and 2 threads and, where the machine has more, all hardware threads
// ("BM_sdpa/bert_base/t:1/real_time"). GFLOP/s counts the two products' multiply-adds that the
// mask keeps (4 * E per query-key pair taking part: L * S pairs, L * (L + 1) / 2 when causal).
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <cstdint>
#include <thread>

namespace {

struct Shape {
  int64_t batch, heads, seq, head_dim;
  bool causal;
};

void run_sdpa(benchmark::State& state, Shape s) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor q = kiln::randn({s.batch, s.heads, s.seq, s.head_dim});
  kiln::Tensor k = kiln::randn({s.batch, s.heads, s.seq, s.head_dim});
  kiln::Tensor v = kiln::randn({s.batch, s.heads, s.seq, s.head_dim});
  for (auto _ : state) {
    kiln::Tensor out = kiln::scaled_dot_product_attention(q, k, v, kiln::Tensor(), 0.0, s.causal);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  const double pairs = s.causal ? s.seq * (s.seq + 1) / 2.0 : double(s.seq) * double(s.seq);
  const double flops = 4.0 * double(s.batch * s.heads) * pairs * double(s.head_dim);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_shape(const char* name, Shape s) {
  auto* b = benchmark::RegisterBenchmark(name, [s](benchmark::State& st) { run_sdpa(st, s); });
  b->ArgName("t")->Arg(1)->Arg(2);
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw > 2) b->Arg(hw);
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_shape("BM_sdpa/bert_base", {4, 12, 128, 64, false});
  register_shape("BM_sdpa/bert_base_causal", {4, 12, 128, 64, true});
  register_shape("BM_sdpa/long_2048", {1, 12, 2048, 64, false});
  register_shape("BM_sdpa/long_2048_causal", {1, 12, 2048, 64, true});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
