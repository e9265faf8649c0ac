// Memory planning: buffers whose lifetimes do not overlap share arena memory, and compiled
// functions give eager's results with a per-call arena and with the arena kept across calls
// (mode "reduce-overhead"), also from several threads at once.
#include "inductor/memory_plan.h"

#include "capture/capture_test_util.h"
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <thread>

namespace kiln::inductor {
namespace {

using testing::all_close;
using testing::LogCapture;

// A kernel writing `out` from `in` (both [256] float32), as one loop nest of its own.
Step copy_step(int in, int out) {
  Kernel k;
  k.ranges = {256};
  k.body = load(in, var(0), DType::Float32);
  k.output = out;
  k.store = var(0);
  LoopNest nest;
  nest.outer = {};
  nest.parts.push_back(k);
  nest.args = {in, out};
  return nest;
}

Buffer float_buffer(Buffer::Role role) {
  Buffer b;
  b.sizes = {256};
  b.strides = {1};
  b.role = role;
  return b;
}

TEST(MemoryPlan, BuffersWithDisjointLifetimesShareMemory) {
  // input -> b1 -> b2 -> b3 -> b4 (output): b1 lives over steps 0-1, b2 1-2, b3 2-3; b1 and b3
  // never live at once.
  Program p;
  p.buffers.push_back(float_buffer(Buffer::Role::Input));
  for (int i = 0; i < 4; ++i) p.buffers.push_back(float_buffer(Buffer::Role::Intermediate));
  for (int i = 0; i < 4; ++i) p.steps.push_back(copy_step(i, i + 1));
  p.outputs.push_back({4, {256}, {1}, 0});
  const MemoryPlan plan = plan_memory(p);
  EXPECT_EQ(plan.offset[0], -1);  // the input
  EXPECT_EQ(plan.offset[4], -1);  // the output
  EXPECT_EQ(plan.offset[1], plan.offset[3]);
  EXPECT_NE(plan.offset[1], plan.offset[2]);
  EXPECT_EQ(plan.total_bytes, 3 * 1024);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024);
}

TEST(MemoryPlan, CompiledFunctionsWithAnArenaMatchEager) {
  // Intermediates that the loop nests cannot keep local (read across nests of other shapes).
  auto body = [](const Tensor& x, const Tensor& y) {
    Tensor a = (x * 2.0).exp();
    Tensor s = a.sum(0, true);
    Tensor b = (a / s + y).tanh();
    return (b.sum(1, true) * a).sin() + b.t().matmul(a).sum();
  };
  for (const char* mode : {"default", "reduce-overhead"}) {
    SCOPED_TRACE(mode);
    LogCapture logs("fusion");
    auto f = compile(body, {.mode = mode, .backend = std::string("inductor")});
    autograd::NoGradGuard no_grad;
    for (int call = 0; call < 3; ++call) {
      manual_seed(call);
      const Tensor x = randn({48, 40}) * 0.3;
      const Tensor y = randn({48, 40});
      const Tensor got = f(x, y);
      EXPECT_TRUE(all_close(got, body(x, y), 1e-4, 1e-5)) << "call " << call;
      // The result owns its memory: the next call's arena must not change it.
      const Tensor kept = got.clone();
      f(x * 2.0, y);
      EXPECT_TRUE(all_close(got, kept, 0, 0)) << "call " << call;
    }
    EXPECT_EQ(logs.count("intermediates in an arena of 0 bytes"), 0u) << logs.all();
    EXPECT_EQ(logs.count("intermediates in an arena of"), 1u) << logs.all();
    // Two threads at once: one uses the kept arena, the other its own.
    std::vector<Tensor> results(2);
    std::vector<Tensor> inputs = {randn({48, 40}) * 0.3, randn({48, 40}) * 0.3};
    const Tensor y = randn({48, 40});
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        autograd::NoGradGuard inner;
        for (int i = 0; i < 20; ++i)
          results[static_cast<size_t>(t)] = f(inputs[static_cast<size_t>(t)], y);
      });
    }
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < 2; ++t) {
      EXPECT_TRUE(all_close(results[static_cast<size_t>(t)],
                            body(inputs[static_cast<size_t>(t)], y), 1e-4, 1e-5));
    }
  }
}

}  // namespace
}  // namespace kiln::inductor
