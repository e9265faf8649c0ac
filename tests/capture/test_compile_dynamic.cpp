// compile with dynamic shapes (backend eager): dynamic=true traces every argument dimension as a
// symbol, automatic dynamic makes a dimension dynamic after it caused a recompile, dynamic=false
// specializes every size, mark_dynamic / mark_static override per tensor; a size guard that
// fails recompiles with its reason logged. Backend functions (no symbolic graphs) stay static.
#include "capture/capture_test_util.h"

#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <fmt/format.h>

#include <utility>
#include <vector>

#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;

// Compilations so far: each one logs its first graph on the `graph` channel.
size_t compilations(const LogCapture& logs) { return logs.count("graph: graph 0 of"); }

CompileOptions eager_options(std::optional<bool> dynamic) {
  CompileOptions o;
  o.dynamic = dynamic;
  o.backend = std::string("eager");
  return o;
}

std::shared_ptr<nn::Sequential> small_mlp() {
  auto model = models::mlp({.in_features = 16, .hidden_features = {32, 32}, .out_features = 8});
  model->eval();
  return model;
}

TEST(CompileDynamic, DynamicTrueMlpCompilesOnceForEveryBatch) {
  autograd::NoGradGuard no_grad;
  auto model = small_mlp();
  LogCapture logs("graph");
  auto fast = compile(model, eager_options(true));
  for (int64_t batch : {3, 5, 7, 12}) {
    const Tensor x = randn({batch, 16});
    EXPECT_TRUE(all_close(fast->forward(x), model->forward(x), 1e-5, 1e-6)) << batch;
  }
  EXPECT_EQ(compilations(logs), 1u);
}

TEST(CompileDynamic, DynamicTrueBertCompilesOnceForBatchAndSequence) {
  autograd::NoGradGuard no_grad;
  auto model = models::bert({.vocab_size = 100,
                             .hidden_size = 32,
                             .num_hidden_layers = 2,
                             .num_attention_heads = 2,
                             .intermediate_size = 64,
                             .max_position_embeddings = 64});
  model->eval();
  LogCapture logs("recompiles,graph");
  auto fast = compile(model, eager_options(true));
  for (auto [batch, seq] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 12}, {3, 7}, {4, 20}, {5, 33}}) {
    const Tensor ids = randint(0, 100, {batch, seq});
    EXPECT_TRUE(all_close(fast->forward(ids), model->forward(ids), 1e-5, 1e-6))
        << batch << " x " << seq;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  // A sequence longer than the position table breaks the guard Le(s1, 64): a recompile, whose
  // trace raises the model's own error.
  EXPECT_THROW(fast->forward(randint(0, 100, {2, 70})), Error);
  EXPECT_EQ(logs.count("size guard failed"), 1u) << logs.all();
}

TEST(CompileDynamic, AutomaticDynamicRecompilesOnceThenHits) {
  autograd::NoGradGuard no_grad;
  auto model = small_mlp();
  LogCapture logs("recompiles,dynamic,graph");
  auto fast = compile(model, eager_options(std::nullopt));
  for (int64_t batch : {3, 5, 7, 9}) {
    const Tensor x = randn({batch, 16});
    EXPECT_TRUE(all_close(fast->forward(x), model->forward(x), 1e-5, 1e-6)) << batch;
  }
  EXPECT_EQ(compilations(logs), 2u) << logs.all();
  EXPECT_EQ(logs.count("recompiles: recompiling"), 1u) << logs.all();
  EXPECT_EQ(logs.count("size of dim 0 changed from 3 to 5"), 1u) << logs.all();
  EXPECT_EQ(logs.count("automatic dynamic: arg 0 dim 0"), 1u) << logs.all();
}

// Slices whose bounds lie beyond any size (None, Python's sys.maxsize, -2^62) clamp to the
// symbolic size without int64 overflow in its expressions; values equal eager's at every size.
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// The most negative bound a SymInt holds (values below -2^62 are its handles' range).
constexpr int64_t kFarNegative = -(int64_t{1} << 62);

TEST(CompileDynamic, SlicesWithFarBoundsOfSymbolicSizes) {
  CompileOptions options;
  options.dynamic = true;
  auto f = compile(
      [](const Tensor& x) {
        return x.slice(0, 1, kMax) * 2 + x.slice(0, kFarNegative, kMax).sum() +
               x.slice(0, -3, std::nullopt, 2).sum();
      },
      options);
  for (int64_t n : {5, 9, 30}) {
    const Tensor x = arange(n).to(kFloat32);
    const Tensor want = x.slice(0, 1, kMax) * 2 + x.slice(0, kFarNegative, kMax).sum() +
                        x.slice(0, -3, std::nullopt, 2).sum();
    EXPECT_TRUE(testing::all_close(f(x), want, 1e-6, 1e-6)) << n;
  }
}

TEST(CompileDynamic, DynamicFalseCompilesPerSize) {
  autograd::NoGradGuard no_grad;
  auto model = small_mlp();
  LogCapture logs("graph");
  auto fast = compile(model, eager_options(false));
  for (int64_t batch : {3, 5, 7}) {
    const Tensor x = randn({batch, 16});
    EXPECT_TRUE(all_close(fast->forward(x), model->forward(x), 1e-5, 1e-6)) << batch;
  }
  EXPECT_EQ(compilations(logs), 3u);
}

TEST(CompileDynamic, MarkDynamicRangeRecompilesOutsideIt) {
  LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x) { return x * 2.0 + 1.0; }, eager_options(std::nullopt));
  const Tensor first = randn({4, 3});
  mark_dynamic(first, 0, 2, 8);
  EXPECT_TRUE(all_close(f(first), first * 2.0 + 1.0));
  for (int64_t batch : {6, 8}) {
    const Tensor x = randn({batch, 3});
    EXPECT_TRUE(all_close(f(x), x * 2.0 + 1.0)) << batch;
  }
  EXPECT_EQ(f.core().cache_entries(), 1u) << logs.all();
  const Tensor big = randn({12, 3});
  EXPECT_TRUE(all_close(f(big), big * 2.0 + 1.0));
  EXPECT_EQ(f.core().cache_entries(), 2u);
  EXPECT_EQ(logs.count("size guard failed"), 1u) << logs.all();
}

TEST(CompileDynamic, MarkStaticKeepsADimStaticUnderDynamicTrue) {
  LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x) { return x.sum(1); }, eager_options(true));
  auto marked = [](std::vector<int64_t> sizes) {
    Tensor x = randn(sizes);
    mark_static(x, 0);
    return x;
  };
  for (int64_t n : {5, 7, 9}) {
    const Tensor x = marked({4, n});
    EXPECT_TRUE(all_close(f(x), x.sum(1), 1e-5, 1e-6)) << n;
  }
  EXPECT_EQ(f.core().cache_entries(), 1u) << logs.all();
  const Tensor x = marked({6, 5});
  EXPECT_TRUE(all_close(f(x), x.sum(1), 1e-5, 1e-6));
  EXPECT_EQ(f.core().cache_entries(), 2u);
  EXPECT_EQ(logs.count("size of dim 0 changed from 4 to 6"), 1u) << logs.all();
}

TEST(CompileDynamic, BranchOnASizeRecompilesWithTheGuardLogged) {
  LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x) { return x.sym_size(0) > SymInt(8) ? x * 2.0 : x * 3.0; },
                   eager_options(true));
  for (int64_t n : {4, 6}) {
    const Tensor x = randn({n});
    EXPECT_TRUE(all_close(f(x), x * 3.0)) << n;
  }
  EXPECT_EQ(f.core().cache_entries(), 1u);
  for (int64_t n : {12, 16}) {
    const Tensor x = randn({n});
    EXPECT_TRUE(all_close(f(x), x * 2.0)) << n;
  }
  EXPECT_EQ(f.core().cache_entries(), 2u);
  EXPECT_EQ(logs.count("size guard failed"), 1u) << logs.all();
}

TEST(CompileDynamic, GraphBreakUnderDynamicTrue) {
  auto f = compile(
      [](const Tensor& x) {
        Tensor y = x * 2.0;
        graph_break();
        return y + 1.0;
      },
      eager_options(true));
  for (int64_t n : {4, 6, 9}) {
    const Tensor x = randn({n, 3});
    EXPECT_TRUE(all_close(f(x), x * 2.0 + 1.0)) << n;
  }
}

// An output with no elements (a batch of 0) takes the call's sizes, not the traced symbolic ones.
TEST(CompileDynamic, ZeroElementOutputsHaveTheCallsSizes) {
  for (const char* backend : {"eager", "aot_eager", "inductor"}) {
    SCOPED_TRACE(backend);
    CompileOptions o;
    o.dynamic = true;
    o.backend = std::string(backend);
    auto f = compile([](const Tensor& x) { return (x * 2.0).sum({1}); }, o);
    for (int64_t c : {3, 5}) {
      const Tensor y = f(randn({0, c, 4}));
      EXPECT_EQ(y.sym_sizes().vec(), (std::vector<SymInt>{0, 4})) << c;
      EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{0, 4})) << c;
    }
  }
}

// An op that needs concrete sizes under a symbolic trace (group_norm's composite reads them):
// the call is traced again with static sizes, and the function stays static, with the reason
// on the dynamic channel; results stay right.
TEST(CompileDynamic, TracesStaticallyWhenAnOpNeedsConcreteSizes) {
  LogCapture logs("dynamic,graph");
  auto body = [](const Tensor& x) { return group_norm(x * 2.0, 2) + 1.0; };
  CompileOptions o;
  o.dynamic = true;
  auto f = compile(body, o);
  for (int64_t n : {3, 5, 3}) {
    const Tensor x = randn({n, 4, 6});
    EXPECT_TRUE(all_close(f(x), body(x), 1e-5, 1e-5)) << n;
  }
  EXPECT_EQ(logs.count("tracing with symbolic sizes failed"), 1u) << logs.all();
  EXPECT_EQ(compilations(logs), 2u) << logs.all();  // one per size: static from then on
}

TEST(CompileDynamic, UserBackendsWithDynamicTrueStayStaticPerSize) {
  autograd::NoGradGuard no_grad;
  auto model = small_mlp();
  LogCapture logs("dynamic,graph");
  CompileOptions o;
  o.dynamic = true;
  // A backend function has no traits: it is given static graphs.
  o.backend = Backend([](const graph::Graph& g, std::span<const Tensor>, const BackendContext&) {
    EXPECT_FALSE(graph::has_symbolic_sizes(g));
    auto owned = std::make_shared<const graph::Graph>(g.clone());
    return CompiledGraph(
        [owned](std::span<const Tensor> inputs) { return graph::interpret(*owned, inputs); });
  });
  auto fast = compile(model, o);
  for (int64_t batch : {3, 5, 3}) {
    const Tensor x = randn({batch, 16});
    EXPECT_TRUE(all_close(fast->forward(x), model->forward(x), 1e-4, 1e-5)) << batch;
  }
  EXPECT_EQ(compilations(logs), 2u);
  EXPECT_EQ(logs.count("takes only static graphs"), 1u) << logs.all();
}

TEST(CompileDynamic, MarkDynamicChecksItsArguments) {
  const Tensor x = randn({2, 3});
  EXPECT_THROW(mark_dynamic(x, 2), Error);
  EXPECT_THROW(mark_dynamic(x, 0, 8, 4), Error);
  EXPECT_THROW(mark_static(x, -3), Error);
  mark_dynamic(x, -1, 2, 16);
  const auto mark = capture::dim_mark(x, 1);
  ASSERT_TRUE(mark.has_value());
  EXPECT_TRUE(mark->dynamic);
  EXPECT_EQ(mark->max, 16);
  EXPECT_FALSE(capture::dim_mark(randn({2, 3}), 1).has_value());
}

}  // namespace
}  // namespace kiln
