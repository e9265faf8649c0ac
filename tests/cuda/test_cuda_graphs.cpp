// CUDA graphs: kiln::cuda::Graph captures work and replays it on the values its memory holds at
// the replay; memory allocated while capturing belongs to the graph alone; work that waits for the
// device cannot be captured and leaves the device usable. The inductor's reduce-overhead mode
// replays compiled graphs: results against eager on the CPU at every call, outputs kept across
// calls, inputs that move. Random draws captured into a graph draw fresh numbers at each replay:
// what eager draws at the same point of the generator's stream. Skipped without a CUDA device,
// except the check that a build or machine without one raises.
#include "capture/capture_test_util.h"
#include "cuda/cuda_test_util.h"

#include <kiln/cuda/graph.h>

#include <functional>
#include <utility>
#include <vector>

namespace kiln {
namespace {

using namespace cuda_test;

#define REQUIRE_GPU() \
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

TEST(CudaGraph, WithoutADeviceCaptureRaises) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  cuda::Graph graph;
  EXPECT_TRUE(throws_error([&] { graph.capture_begin(); }, {"CUDA"}));
  EXPECT_FALSE(graph.captured());
}

TEST(CudaGraph, ReplayComputesFromTheValuesAtTheReplay) {
  REQUIRE_GPU();
  const Tensor a = sample({1000}, DType::Float32, 1), b = sample({1000}, DType::Float32, 2);
  Tensor x = gpu(a);
  cuda::Graph graph;
  graph.capture_begin();
  EXPECT_TRUE(cuda::is_capturing());
  const Tensor y = (x * 2 + 1).exp();
  graph.capture_end();
  EXPECT_FALSE(cuda::is_capturing());
  ASSERT_TRUE(graph.captured());
  graph.replay();
  EXPECT_TRUE(all_close(cpu(y), (a * 2 + 1).exp(), 1e-6, 1e-6));
  x.copy_(gpu(b));
  graph.replay();
  EXPECT_TRUE(all_close(cpu(y), (b * 2 + 1).exp(), 1e-6, 1e-6));
  // The work queued before the capture came first: y's memory is the graph's.
  EXPECT_TRUE(graph.owns(y.data_ptr()));
  EXPECT_TRUE(cuda::is_graph_memory(y.data_ptr()));
}

TEST(CudaGraph, ItsPoolIsNotHandedOutWhileItLives) {
  REQUIRE_GPU();
  const Tensor x = gpu(sample({4096}, DType::Float32, 3));
  Tensor y;
  void* freed = nullptr;
  {
    cuda::Graph graph;
    graph.capture_begin();
    {
      const Tensor t = x * 3;  // freed inside the capture: the graph's intermediate
      freed = t.data_ptr();
      y = t + 1;
    }
    graph.capture_end();
    graph.replay();
    EXPECT_TRUE(all_close(cpu(y), cpu(x) * 3 + 1, 1e-6, 1e-6));
    // Allocations after the capture (the same size as the freed intermediate) get other memory.
    std::vector<Tensor> later;
    for (int i = 0; i < 8; ++i) {
      later.push_back(empty({4096}, TensorOptions().device(Device::cuda())));
      EXPECT_NE(later.back().data_ptr(), freed);
      EXPECT_FALSE(graph.owns(later.back().data_ptr()));
    }
  }
  // The graph is gone: y's memory is ordinary memory, still y's.
  EXPECT_FALSE(cuda::is_graph_memory(y.data_ptr()));
  EXPECT_TRUE(all_close(cpu(y), cpu(x) * 3 + 1, 1e-6, 1e-6));
}

TEST(CudaGraph, WaitingForTheDeviceCannotBeCaptured) {
  REQUIRE_GPU();
  const Tensor x = gpu(sample({64}, DType::Float32, 4));
  cuda::Graph graph;
  graph.capture_begin();
  bool raised = false;
  try {
    (void)cpu(x * 2);  // a copy to the host waits for the device
    graph.capture_end();
  } catch (const Error&) {
    raised = true;
    graph.capture_abort();
  }
  EXPECT_TRUE(raised);
  EXPECT_FALSE(graph.captured());
  EXPECT_FALSE(cuda::is_capturing());
  // The device and the stream work as before.
  EXPECT_TRUE(all_close(cpu(x + 1), cpu(x) + 1, 1e-6, 1e-6));
  EXPECT_TRUE(throws_error([&] { graph.replay(); }, {"nothing was captured"}));
}

std::vector<Tensor> mlp_step(const std::vector<Tensor>& in) {
  // in: x [n, 32], w [32, 16], b [16]
  const Tensor h = (in[0].matmul(in[1]) + in[2]).relu();
  return {h, h.sum(-1).tanh()};
}

// reduce-overhead replays CUDA graphs by default, as PyTorch's.
CompileOptions reduce_overhead() {
  CompileOptions options;
  options.mode = "reduce-overhead";
  return options;
}

TEST(CudaGraphs, ReduceOverheadRecordsOnceAndReplays) {
  REQUIRE_GPU();
  testing::LogCapture logs("cudagraphs,perf_hints");
  auto compiled = compile(mlp_step, reduce_overhead());
  const Tensor w = sample({32, 16}, DType::Float32, 5), b = sample({16}, DType::Float32, 6);
  const Tensor gw = gpu(w), gb = gpu(b);
  size_t recorded_by_the_fourth_call = 0;
  for (int call = 0; call < 8; ++call) {
    SCOPED_TRACE(call);
    // A new input tensor each call; the weights stay put (read in place). The input may come at
    // the address the allocator gave the last one (read in place) or not (then it moved: one
    // recording more, and it is copied in from then on).
    const Tensor x = sample({8, 32}, DType::Float32, 10 + static_cast<uint64_t>(call));
    const std::vector<Tensor> got = compiled(std::vector<Tensor>{gpu(x), gw, gb});
    const std::vector<Tensor> want = mlp_step({x, w, b});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(all_close(cpu(got[0]), want[0], 1e-5, 1e-5));
    EXPECT_TRUE(all_close(cpu(got[1]), want[1], 1e-5, 1e-5));
    if (call == 3) recorded_by_the_fourth_call = logs.count("recorded a CUDA graph");
  }
  EXPECT_GE(recorded_by_the_fourth_call, 1u) << logs.all();
  EXPECT_LE(recorded_by_the_fourth_call, 2u) << logs.all();
  // Later calls replay.
  EXPECT_EQ(logs.count("recorded a CUDA graph"), recorded_by_the_fourth_call) << logs.all();
  EXPECT_EQ(logs.count("without a CUDA graph"), 0u) << logs.all();
}

TEST(CudaGraphs, OutputsKeptAcrossCallsKeepTheirValues) {
  REQUIRE_GPU();
  auto compiled = compile(mlp_step, reduce_overhead());
  const Tensor w = sample({32, 16}, DType::Float32, 7), b = sample({16}, DType::Float32, 8);
  const Tensor gw = gpu(w), gb = gpu(b);
  std::vector<Tensor> xs;
  std::vector<std::vector<Tensor>> kept;
  for (int call = 0; call < 5; ++call) {
    xs.push_back(sample({8, 32}, DType::Float32, 20 + static_cast<uint64_t>(call)));
    kept.push_back(compiled(std::vector<Tensor>{gpu(xs.back()), gw, gb}));
  }
  // Every call's outputs still hold that call's results (later replays wrote the graph's memory).
  for (size_t call = 0; call < kept.size(); ++call) {
    SCOPED_TRACE(call);
    const std::vector<Tensor> want = mlp_step({xs[call], w, b});
    EXPECT_TRUE(all_close(cpu(kept[call][0]), want[0], 1e-5, 1e-5));
    EXPECT_TRUE(all_close(cpu(kept[call][1]), want[1], 1e-5, 1e-5));
  }
}

TEST(CudaGraphs, AnInputThatMovesIsRecordedAgain) {
  REQUIRE_GPU();
  testing::LogCapture logs("cudagraphs");
  auto compiled = compile(mlp_step, reduce_overhead());
  const Tensor x = sample({8, 32}, DType::Float32, 9);
  const Tensor gx = gpu(x);
  Tensor gw, gb;
  for (int call = 0; call < 6; ++call) {
    SCOPED_TRACE(call);
    // The weights stay where they are for three calls (read in place), then are new tensors.
    const auto seed = static_cast<uint64_t>(call < 3 ? 0 : call);
    const Tensor w = sample({32, 16}, DType::Float32, 30 + seed);
    const Tensor b = sample({16}, DType::Float32, 40 + seed);
    if (call == 0 || call >= 3) {
      gw = gpu(w);
      gb = gpu(b);
    }
    const std::vector<Tensor> got = compiled(std::vector<Tensor>{gx, gw, gb});
    const std::vector<Tensor> want = mlp_step({x, w, b});
    EXPECT_TRUE(all_close(cpu(got[1]), want[1], 1e-5, 1e-5));
  }
  EXPECT_GE(logs.count("records its CUDA graph again"), 1u) << logs.all();
}

TEST(CudaGraphs, ANumberTakenByValueIsRecordedAgainWhenItChanges) {
  REQUIRE_GPU();
  auto compiled =
      compile([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[1] + 1}; },
              reduce_overhead());
  const Tensor x = sample({100}, DType::Float32, 11);
  const Tensor gx = gpu(x);
  for (double scale : {2.0, 2.0, 2.0, 3.0, 3.0, -1.5}) {
    SCOPED_TRACE(scale);
    const Tensor s = full({}, scale);  // a 0-dim CPU tensor beside GPU tensors
    const Tensor got = compiled(std::vector<Tensor>{gx, s})[0];
    EXPECT_TRUE(all_close(cpu(got), x * scale + 1, 1e-6, 1e-6));
  }
}

// {x * 2 dropped out with p = 0.5, its mask}: the scale is 2, so the output is exact in any
// precision and the compiled program (rand, then pointwise ops) gives eager's values bit for bit.
std::vector<Tensor> dropout_step(const std::vector<Tensor>& in) {
  auto [out, mask] = native_dropout(in[0] * 2, 0.5, /*train=*/true);
  return {out, mask};
}

// Five calls of `f` on x after manual_seed(seed), copied to the CPU; and the CUDA generator's
// offset after them.
template <typename F>
std::pair<std::vector<std::vector<Tensor>>, uint64_t> five_calls(F&& f, const Tensor& x,
                                                                 uint64_t seed) {
  manual_seed(seed);
  std::vector<std::vector<Tensor>> results;
  for (int call = 0; call < 5; ++call) {
    std::vector<Tensor> got = f(std::vector<Tensor>{x});
    for (Tensor& t : got) t = cpu(t);
    results.push_back(std::move(got));
  }
  return {results, default_generator(Device::cuda()).offset()};
}

TEST(CudaGraphs, DropoutReplaysDrawWhatAnUngraphedRunDraws) {
  REQUIRE_GPU();
  testing::LogCapture logs("cudagraphs,perf_hints");
  const Tensor x = sample({4099}, DType::Float32, 15);  // not a whole number of Philox blocks
  const Tensor gx = gpu(x);
  auto graphed = compile(dropout_step, reduce_overhead());
  CompileOptions no_graphs;
  no_graphs.mode = "reduce-overhead";
  no_graphs.options["cudagraphs"] = "false";
  auto compiled = compile(dropout_step, no_graphs);
  // Call 1 runs uncaptured, call 2 is captured (and replayed at once), calls 3 to 5 replay.
  const auto [got, graphed_offset] = five_calls(graphed, gx, 77);
  const auto [ungraphed, ungraphed_offset] = five_calls(compiled, gx, 77);
  const auto [eager, eager_offset] = five_calls(dropout_step, gx, 77);
  // The CPU's generator starts from the same seed and its kernel draws the same mask.
  const std::vector<std::vector<Tensor>> on_cpu = five_calls(dropout_step, x, 77).first;
  for (size_t call = 0; call < got.size(); ++call) {
    SCOPED_TRACE(call);
    ASSERT_EQ(got[call].size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_TRUE(same_values(got[call][k], ungraphed[call][k])) << k;
      EXPECT_TRUE(same_values(got[call][k], eager[call][k])) << k;
      EXPECT_TRUE(same_values(got[call][k], on_cpu[call][k])) << k;
    }
    // Each replay draws new numbers.
    if (call > 0) {
      EXPECT_FALSE(same_values(got[call][1], got[call - 1][1]));
    }
  }
  EXPECT_EQ(graphed_offset, ungraphed_offset);
  EXPECT_EQ(graphed_offset, eager_offset);
  EXPECT_EQ(logs.count("recorded a CUDA graph"), 1u) << logs.all();
  EXPECT_EQ(logs.count("Philox counters per replay"), 1u) << logs.all();
  EXPECT_EQ(logs.count("without a CUDA graph"), 0u) << logs.all();
}

TEST(CudaGraphs, RandpermRunsWithoutAGraph) {
  REQUIRE_GPU();
  testing::LogCapture logs("cudagraphs,perf_hints");
  const auto f = [](const std::vector<Tensor>& in) {
    const Tensor perm = randperm(in[0].size(0), TensorOptions(DType::Int64).device(Device::cuda()));
    return std::vector<Tensor>{in[0] + perm.to(DType::Float32)};
  };
  auto graphed = compile(f, reduce_overhead());
  const Tensor gx = gpu(sample({64}, DType::Float32, 16));
  const auto [got, graphed_offset] = five_calls(graphed, gx, 78);
  const auto [eager, eager_offset] = five_calls(f, gx, 78);
  for (size_t call = 0; call < got.size(); ++call) {
    EXPECT_TRUE(same_values(got[call][0], eager[call][0])) << call;
  }
  EXPECT_EQ(graphed_offset, eager_offset);
  EXPECT_EQ(logs.count("recorded a CUDA graph"), 0u) << logs.all();
  EXPECT_GE(logs.count("randperm (CUDA): cannot be captured"), 1u) << logs.all();
}

// rand, randn (float64) and randint on the GPU: {values copied to the CPU}.
std::vector<Tensor> three_draws() {
  const TensorOptions on_gpu = TensorOptions().device(Device::cuda());
  return {rand({1001}, on_gpu), randn({999}, on_gpu.dtype(DType::Float64)),
          randint(-5, 50, {777}, on_gpu)};
}

TEST(CudaGraph, ReplaysDrawWhatEagerDrawsAtTheSamePoint) {
  REQUIRE_GPU();
  Generator& generator = default_generator(Device::cuda());
  constexpr int kReplays = 4;
  manual_seed(31);
  std::vector<std::vector<Tensor>> want;
  for (int k = 0; k < kReplays; ++k) {
    want.push_back(three_draws());
    for (Tensor& t : want.back()) t = cpu(t);
  }
  const uint64_t eager_offset = generator.offset();
  manual_seed(31);
  cuda::Graph graph;
  graph.capture_begin();
  const std::vector<Tensor> drawn = three_draws();
  graph.capture_end();
  EXPECT_EQ(generator.offset(), 0u);  // the capture reserved nothing
  EXPECT_EQ(graph.random_counters() * kReplays, eager_offset);
  for (int k = 0; k < kReplays; ++k) {
    SCOPED_TRACE(k);
    graph.replay();
    for (size_t i = 0; i < drawn.size(); ++i) EXPECT_TRUE(same_values(cpu(drawn[i]), want[k][i]));
  }
  EXPECT_EQ(generator.offset(), eager_offset);
}

TEST(CudaGraph, ManualSeedBetweenReplaysReproduces) {
  REQUIRE_GPU();
  const Tensor x = gpu(ones({5000}));
  cuda::Graph graph;
  graph.capture_begin();
  const Tensor y = dropout(x, 0.3, /*train=*/true);
  graph.capture_end();
  manual_seed(5);
  graph.replay();
  const Tensor first = cpu(y);
  graph.replay();
  const Tensor second = cpu(y);
  EXPECT_FALSE(same_values(first, second));
  manual_seed(5);
  graph.replay();
  EXPECT_TRUE(same_values(cpu(y), first));
  graph.replay();
  EXPECT_TRUE(same_values(cpu(y), second));
  manual_seed(5);
  EXPECT_TRUE(same_values(cpu(dropout(x, 0.3, /*train=*/true)), first));
}

TEST(CudaGraph, GraphsReplayedInTurnDrawInTurn) {
  REQUIRE_GPU();
  // Each graph has its own seed and offset on the device: replays of one never change what the
  // other reads.
  const TensorOptions on_gpu = TensorOptions().device(Device::cuda());
  manual_seed(41);
  std::vector<Tensor> want;
  for (int k = 0; k < 3; ++k) {
    want.push_back(cpu(rand({300}, on_gpu)));
    want.push_back(cpu(randn({200}, on_gpu)));
  }
  cuda::Graph uniform, normal;
  uniform.capture_begin();
  const Tensor u = rand({300}, on_gpu);
  uniform.capture_end();
  normal.capture_begin();
  const Tensor z = randn({200}, on_gpu);
  normal.capture_end();
  manual_seed(41);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    uniform.replay();
    normal.replay();
    EXPECT_TRUE(same_values(cpu(u), want[2 * static_cast<size_t>(k)]));
    EXPECT_TRUE(same_values(cpu(z), want[2 * static_cast<size_t>(k) + 1]));
  }
}

TEST(CudaGraph, DrawsThatCannotBeReplayedRaise) {
  REQUIRE_GPU();
  const TensorOptions on_gpu = TensorOptions().device(Device::cuda());
  const auto capture = [](const std::function<void()>& work) {
    cuda::Graph graph;
    graph.capture_begin();
    try {
      work();
      graph.capture_end();
    } catch (...) {
      graph.capture_abort();
      throw;
    }
  };
  EXPECT_TRUE(
      throws_error([&] { capture([&] { (void)randperm(10, on_gpu.dtype(DType::Int64)); }); },
                   {"randperm (CUDA)", "cannot be captured"}));
  Generator own(3);
  EXPECT_TRUE(throws_error([&] { capture([&] { (void)rand({10}, on_gpu, &own); }); },
                           {"a Generator passed to the op", "CUDA graph"}));
  EXPECT_FALSE(cuda::is_capturing());
  // Uncaptured, both draw as before.
  EXPECT_EQ(randperm(10, on_gpu.dtype(DType::Int64)).numel(), 10);
  EXPECT_EQ(rand({10}, on_gpu, &own).numel(), 10);
}

// reduce-overhead records graphs unless options{"cudagraphs": "false"}; default mode does not.
TEST(CudaGraphs, TurnedOffOrDefaultModeRecordsNoGraph) {
  REQUIRE_GPU();
  testing::LogCapture logs("cudagraphs");
  CompileOptions off;
  off.mode = "reduce-overhead";
  off.options["cudagraphs"] = "false";
  const CompileOptions default_mode;
  const Tensor x = sample({8, 32}, DType::Float32, 12), w = sample({32, 16}, DType::Float32, 13),
               b = sample({16}, DType::Float32, 14);
  for (const CompileOptions& options : {off, default_mode}) {
    auto compiled = compile(mlp_step, options);
    for (int call = 0; call < 3; ++call) {
      const std::vector<Tensor> got = compiled(std::vector<Tensor>{gpu(x), gpu(w), gpu(b)});
      EXPECT_TRUE(all_close(cpu(got[1]), mlp_step({x, w, b})[1], 1e-5, 1e-5));
    }
  }
  EXPECT_EQ(logs.count("recorded a CUDA graph"), 0u) << logs.all();
}

}  // namespace
}  // namespace kiln
