// Graph breaks: each cause splits the function into graphs with results equal to eager's;
// fullgraph turns a break into an error naming the cause and the source line; explain reports
// graphs, breaks, ops per graph and guards.
#include "capture/capture_test_util.h"

#include <kiln/ops/print.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::RecordingBackend;
using testing::throws_error;

// x * 2, then a host decision on a value computed from it, then more ops.
Tensor branchy(const Tensor& x) {
  Tensor y = x * 2.0;
  const double total = y.sum().item<double>();  // needs a concrete value: a graph break
  return total > 0 ? y + 1.0 : y - 1.0;
}

TEST(CompileBreaks, ItemSplitsAndResultsAreRight) {
  RecordingBackend rec;
  int calls = 0;
  auto f = compile(
      [&calls](const Tensor& x) {
        ++calls;
        return branchy(x);
      },
      {.backend = rec.backend()});
  Tensor pos = tensor({1.0, 2.0});
  Tensor neg = tensor({-1.0, -2.0});
  EXPECT_TRUE(all_close(f(pos), tensor({3.0, 5.0})));
  EXPECT_EQ(rec.op_counts->size(), 2u);  // graph 0: mul, sum; graph 1: add
  // A breaking function runs again on every call (results follow the data), and graphs whose
  // structure was seen before are not compiled again.
  EXPECT_TRUE(all_close(f(pos), tensor({3.0, 5.0})));
  EXPECT_EQ(rec.op_counts->size(), 2u);
  EXPECT_TRUE(all_close(f(neg), tensor({-3.0, -5.0})));
  EXPECT_EQ(rec.op_counts->size(), 3u);  // the sub branch is a new graph
  EXPECT_EQ(calls, 3);
}

TEST(CompileBreaks, EachCauseBreaks) {
  struct Cause {
    std::string name;
    std::function<Tensor(const Tensor&)> fn;
    std::string reason;
  };
  const std::vector<Cause> causes = {
      {"item", [](const Tensor& x) { return x * x.max().item<double>(); }, "Tensor.item()"},
      {"tensor to bool",
       [](const Tensor& x) {
         const bool positive = (x.sum() > 0.0).item<bool>();
         return positive ? x * 2.0 : x * -2.0;
       },
       "Tensor.item()"},
      {"nonzero", [](const Tensor& x) { return (x * 2.0).nonzero().to(kFloat32).sum(); },
       "data-dependent output size"},
      {"print",
       [](const Tensor& x) {
         Tensor y = x + 1.0;
         const std::string text = format_tensor(y);
         EXPECT_NE(text.find("tensor("), std::string::npos);
         return y * 3.0;
       },
       "printing a tensor"},
      {"explicit",
       [](const Tensor& x) {
         Tensor y = x.exp();
         graph_break();
         return y.log();
       },
       "kiln::graph_break() was called"},
  };
  Tensor x = tensor({0.5, -1.0, 2.0});
  for (const Cause& c : causes) {
    const Tensor eager = c.fn(x);
    auto f = compile(c.fn);
    EXPECT_TRUE(all_close(f(x), eager, 1e-6, 1e-7)) << c.name;
    EXPECT_TRUE(all_close(f(x), eager, 1e-6, 1e-7)) << c.name;
    const std::string report = explain(c.fn, x);
    EXPECT_NE(report.find("graph breaks: 1"), std::string::npos) << c.name << "\n" << report;
    EXPECT_NE(report.find(c.reason), std::string::npos) << c.name << "\n" << report;
  }
}

TEST(CompileBreaks, FullgraphNamesTheCauseAndLine) {
  int item_line = 0;
  auto f = compile(
      [&item_line](const Tensor& x) {
        Tensor m = x.max();
        item_line = __LINE__ + 1;
        const double v = m.item<double>();
        return x * v;
      },
      {.fullgraph = true});
  EXPECT_THROW(f(tensor({1.0, 2.0})), Error);
  EXPECT_TRUE(throws_error(
      [&] {
        f(tensor({1.0, 2.0}));
      },
      {"fullgraph", "graph break", "Tensor.item()",
       "test_compile_breaks.cpp:" + std::to_string(item_line)}));
  EXPECT_EQ(f.core().cache_entries(), 0u);
  // A function without breaks compiles under fullgraph.
  auto g = compile([](const Tensor& x) { return x.max() * x; }, {.fullgraph = true});
  EXPECT_TRUE(all_close(g(tensor({1.0, 2.0})), tensor({2.0, 4.0})));
}

TEST(CompileBreaks, ExplainReportsGraphsOpsAndGuards) {
  const std::string report = explain(
      [](const Tensor& x, double s) {
        Tensor y = (x * s).relu();
        graph_break();
        return y.sum();
      },
      tensor({1.0, -2.0}), 3.0);
  EXPECT_NE(report.find("graphs: 2"), std::string::npos) << report;
  EXPECT_NE(report.find("graph breaks: 1"), std::string::npos) << report;
  EXPECT_NE(report.find("ops per graph: [2, 1]"), std::string::npos) << report;
  EXPECT_NE(report.find("relu("), std::string::npos) << report;
  EXPECT_NE(report.find("arg 1 == 3"), std::string::npos) << report;
  EXPECT_NE(report.find("test_compile_breaks.cpp:"), std::string::npos) << report;
}

TEST(CompileBreaks, GraphBreakOutsideCompileIsANoOp) {
  graph_break();
  SUCCEED();
}

}  // namespace
}  // namespace kiln
