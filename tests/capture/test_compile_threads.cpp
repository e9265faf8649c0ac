// One compiled function or module called from several threads at once: every result is eager's,
// and threads that miss the cache together compile once (the others wait for that compilation
// instead of each adding an entry of their own).
#include <kiln/models/models.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "capture/capture_test_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::RecordingBackend;

constexpr int kThreads = 8;

// Runs body(thread index) on kThreads threads released together.
template <typename F>
void on_threads_at_once(F&& body) {
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (auto& th : threads) th.join();
}

const auto body = [](const Tensor& x, const Tensor& y) {
  return (x.sin() * y + 1.0).relu().sum(0);
};

TEST(CompileThreads, ThreadsMissingTogetherCompileOnce) {
  RecordingBackend rec;
  std::atomic<int> traces{0};
  auto f = compile(
      [&traces](const Tensor& x, const Tensor& y) {
        ++traces;
        return body(x, y);
      },
      {.backend = rec.backend()});
  std::vector<Tensor> xs, ys, results(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(randn({6, 5}));
    ys.push_back(randn({6, 5}));
  }
  on_threads_at_once([&](int t) { results[static_cast<size_t>(t)] = f(xs[t], ys[t]); });
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(all_close(results[static_cast<size_t>(t)], body(xs[t], ys[t]), 1e-6, 1e-7)) << t;
  }
  EXPECT_EQ(traces.load(), 1);
  EXPECT_EQ(f.core().cache_entries(), 1u);
  EXPECT_EQ(rec.op_counts->size(), 1u);
}

TEST(CompileThreads, ThreadsWithDifferentSizesEachGetTheirResult) {
  // Sizes 1..8 on threads at once with the inductor: recompiles (and automatic dynamic) race.
  auto f = compile(body);
  std::vector<Tensor> xs, ys, results(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(randn({t + 1, 3}));
    ys.push_back(randn({t + 1, 3}));
  }
  for (int round = 0; round < 2; ++round) {
    on_threads_at_once([&](int t) { results[static_cast<size_t>(t)] = f(xs[t], ys[t]); });
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_TRUE(all_close(results[static_cast<size_t>(t)], body(xs[t], ys[t]), 1e-5, 1e-6))
          << "round " << round << " thread " << t;
    }
  }
  // The first size compiled, one dynamic entry for the sizes >= 2 and, when the first was not 1,
  // size 1 (specialized, as PyTorch specializes 0 and 1); one entry per thread without the lock.
  EXPECT_LE(f.core().cache_entries(), 3u);
}

TEST(CompileThreads, CompiledModuleServesThreadsAtOnce) {
  manual_seed(3);
  auto model = models::mlp({.in_features = 12, .hidden_features = {24}, .out_features = 5});
  model->eval();
  autograd::NoGradGuard no_grad;
  auto compiled = compile(model);
  std::vector<Tensor> xs, results(kThreads);
  for (int t = 0; t < kThreads; ++t) xs.push_back(randn({4, 12}));
  for (int round = 0; round < 3; ++round) {
    on_threads_at_once([&](int t) {
      autograd::NoGradGuard thread_no_grad;  // grad mode is per thread
      results[static_cast<size_t>(t)] = (*compiled)(xs[t]);
    });
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_TRUE(all_close(results[static_cast<size_t>(t)], model->forward(xs[t]), 1e-5, 1e-6))
          << "round " << round << " thread " << t;
    }
  }
  EXPECT_EQ(compiled->core().cache_entries(), 1u);
}

}  // namespace
}  // namespace kiln
