// The inductor with dynamic shapes: graphs traced with symbolic sizes become kernels that take
// the symbols' values as arguments (loop bounds, strides and buffer sizes are expressions of
// them, the memory plan is worked out per call), so one compilation serves every size the guards
// allow. Checked against eager at sizes that are and are not multiples of the vector width.
#include "capture/capture_test_util.h"

#include <gtest/gtest.h>
#include <kiln/capture/mark_dynamic.h>
#include <kiln/kiln.h>
#include <kiln/ops/sym_size_ops.h>

#include <functional>
#include <utility>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;

size_t compilations(const LogCapture& logs) { return logs.count("graph: graph 0 of"); }

CompileOptions dynamic_inductor(const char* mode = "default") {
  CompileOptions o;
  o.dynamic = true;
  o.mode = mode;
  o.backend = std::string("inductor");
  return o;
}

using Sizes2 = std::vector<std::pair<int64_t, int64_t>>;

// f compiled with dynamic=true equals eager at every size, after one compilation whose kernels
// read the symbols (no fallback to the interpreter).
void expect_one_symbolic_compilation(const std::function<Tensor(const Tensor&)>& f,
                                     const Sizes2& sizes, const char* mode = "default",
                                     double rtol = 1e-5, double atol = 1e-5) {
  autograd::NoGradGuard no_grad;
  LogCapture logs("graph,output_code,perf_hints");
  auto fast = compile(f, dynamic_inductor(mode));
  for (const auto& [m, n] : sizes) {
    const Tensor x = randn({m, n});
    const Tensor got = fast(x);
    EXPECT_TRUE(all_close(got, f(x), rtol, atol)) << m << " x " << n;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  EXPECT_GT(logs.count("= sym[0];"), 0u) << logs.all();
}

TEST(InductorDynamic, PointwiseAndReductionKernelsTakeTheSymbols) {
  expect_one_symbolic_compilation(
      [](const Tensor& x) { return (x * 2.0).exp().sum({1}, true) + x.tanh(); },
      {{5, 7}, {9, 33}, {16, 17}, {3, 100}, {5, 7}});
}

TEST(InductorDynamic, LongRowsAreCutIntoChunks) {
  // One symbolic loop over every element: chunks of a fixed length, the last one partial.
  expect_one_symbolic_compilation([](const Tensor& x) { return (x.flatten() * 3.0).sin(); },
                                  {{2, 9000}, {3, 5000}, {7, 11}});
  expect_one_symbolic_compilation([](const Tensor& x) { return x.flatten().sum(); },
                                  {{2, 9000}, {3, 5000}, {7, 11}}, "default", 1e-5, 1e-3);
}

// An NCHW value with symbolic height and width: a per-channel pointwise kernel (a batch norm's
// affine and ReLU) runs one vector loop over H * W, not a short vector loop and a scalar tail per
// row (W is 7 to 56 in ResNet); the merge is proven for every size, chosen by the hints.
TEST(InductorDynamic, SymbolicHeightAndWidthRunAsOneLoop) {
  autograd::NoGradGuard no_grad;
  manual_seed(9);
  const Tensor scale = randn({1, 8, 1, 1}), shift = randn({1, 8, 1, 1});
  auto body = [](const Tensor& x, const Tensor& a, const Tensor& b) { return (x * a + b).relu(); };
  LogCapture logs("graph,output_code,perf_hints");
  auto fast = compile(body, dynamic_inductor());
  for (auto [h, w] : Sizes2{{7, 9}, {14, 15}, {5, 31}, {56, 3}}) {
    const Tensor x = randn({2, 8, h, w});
    EXPECT_TRUE(all_close(fast(x, scale, shift), body(x, scale, shift), 1e-6, 1e-6))
        << h << " x " << w;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  const std::string kernels = logs.generated_kernels();
  EXPECT_EQ(testing::occurrences(kernels, "for (int64_t i3"), 0u) << kernels;
  EXPECT_GE(testing::occurrences(kernels, "((s2 * s3) - i2_vec_begin)"), 1u) << kernels;
}

TEST(InductorDynamic, BroadcastingBetweenSymbolicDims) {
  autograd::NoGradGuard no_grad;
  LogCapture logs("graph,output_code");
  auto f = [](const Tensor& col, const Tensor& row, const Tensor& m) {
    return (col + row) * m + row.exp();
  };
  auto fast = compile(f, dynamic_inductor());
  for (const auto& [a, b] : Sizes2{{4, 6}, {9, 3}, {17, 33}}) {
    const Tensor col = randn({a, 1}), row = randn({b}), m = randn({a, b});
    EXPECT_TRUE(all_close(fast(col, row, m), f(col, row, m), 1e-5, 1e-5)) << a << " x " << b;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
}

TEST(InductorDynamic, ViewsAndReshapesWithSymbolicSizes) {
  autograd::NoGradGuard no_grad;
  LogCapture logs("graph,output_code,perf_hints");
  auto f = [](const Tensor& x) {
    // [s0, s1, 8] flattened to [s0*s1, 8], reduced, viewed back; a transposed (strided) read.
    const Tensor rows = view_symint(x.reshape({-1, 8}).softmax(-1).sum({-1}),
                                    std::vector<SymInt>{x.sym_size(0), x.sym_size(1)});
    return rows.t().contiguous() * 2.0 + x.sum({2}).t();
  };
  auto fast = compile(f, dynamic_inductor());
  for (const auto& [a, b] : Sizes2{{3, 5}, {6, 13}, {2, 40}}) {
    const Tensor x = randn({a, b, 8});
    EXPECT_TRUE(all_close(fast(x), f(x), 1e-5, 1e-5)) << a << " x " << b;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

TEST(InductorDynamic, ReductionsOverSymbolicDims) {
  // The mean and variance divide by a symbolic count; softmax's rows have a symbolic length.
  expect_one_symbolic_compilation(
      [](const Tensor& x) {
        return x.var({1}, 1, /*keepdim=*/true) + x.mean({1}, true) + x.softmax(1) +
               x.amax({0}, true);
      },
      {{4, 6}, {7, 33}, {16, 129}, {5, 2}});
}

// A count of elements over symbolic sizes (decompositions sum a tensor of ones: mean's
// derivative, a global pool's) is the product of the sizes, not a sweep; a variance over a
// symbolic count scales by its reciprocal, computed once (vector loops, no division per element).
TEST(InductorDynamic, SymbolicCountsAreSizesNotSweeps) {
  autograd::NoGradGuard no_grad;
  LogCapture logs("graph,output_code,perf_hints");
  auto f = [](const Tensor& x) { return ones_like(x).sum({1, 2}) + x.var({1, 2}, 0); };
  auto fast = compile(f, dynamic_inductor());
  for (int64_t n : {5, 9, 33}) {
    const Tensor x = randn({3, n, 7});
    EXPECT_TRUE(all_close(fast(x), f(x), 1e-5, 1e-5)) << n;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  const std::string kernels = logs.generated_kernels();
  // The variance's two sums, nothing else reduces; the count's reciprocal is formed (1 / count)
  // and multiplies.
  EXPECT_EQ(testing::occurrences(kernels, "VecF acc_vec0 ="), 2u) << kernels;
  EXPECT_GE(testing::occurrences(kernels, "VecF::broadcast(float(1))"), 1u) << kernels;
}

TEST(InductorDynamic, BoundedRowsStayInCache) {
  // With the row length bounded (mark_dynamic's max), softmax's row of exponentials is written
  // into the output and scaled there, row by row (nothing goes through planned memory); without
  // a bound it is a buffer of its own.
  autograd::NoGradGuard no_grad;
  auto f = [](const Tensor& x) { return x.softmax(1) * 3.0; };
  for (const bool bounded : {true, false}) {
    SCOPED_TRACE(bounded ? "bounded" : "unbounded");
    LogCapture logs("graph,fusion");
    auto fast = compile(f, dynamic_inductor());
    for (int64_t n : {50, 7, 64, 33}) {
      const Tensor x = randn({24, n});
      if (bounded) mark_dynamic(x, 1, 2, 64);
      EXPECT_TRUE(all_close(fast(x), f(x), 1e-5, 1e-6)) << n;
    }
    EXPECT_EQ(compilations(logs), 1u) << logs.all();
    EXPECT_EQ(logs.count("intermediates in an arena of 0 bytes"), bounded ? 1u : 0u) << logs.all();
  }
}

TEST(InductorDynamic, ReduceOverheadArenaFollowsTheSizes) {
  // The kept arena grows when a call needs more; outputs never alias it.
  autograd::NoGradGuard no_grad;
  auto f = [](const Tensor& x) {
    const Tensor a = (x * 2.0).exp();
    const Tensor s = a.sum({0}, true);
    return (a / s).tanh().sum({1}, true) * a + s;
  };
  auto fast = compile(f, dynamic_inductor("reduce-overhead"));
  std::vector<std::pair<Tensor, Tensor>> kept;
  for (const auto& [m, n] : Sizes2{{4, 8}, {40, 90}, {5, 7}, {64, 33}}) {
    const Tensor x = randn({m, n}) * 0.3;
    const Tensor got = fast(x);
    EXPECT_TRUE(all_close(got, f(x), 1e-4, 1e-5)) << m << " x " << n;
    kept.emplace_back(got, got.clone());
  }
  for (const auto& [got, copy] : kept) EXPECT_TRUE(all_close(got, copy, 0, 0));
}

TEST(InductorDynamic, GuardFailuresRecompile) {
  // A size that crosses a branch the trace took recompiles; the inductor added no guard of its
  // own (its choices are static for every size the trace's guards allow).
  autograd::NoGradGuard no_grad;
  LogCapture logs("graph,recompiles");
  auto f = [](const Tensor& x) { return x.sym_size(0) > SymInt(8) ? x.exp() : x.sin(); };
  auto fast = compile(f, dynamic_inductor());
  for (int64_t m : {4, 6, 12, 20, 5}) {
    const Tensor x = randn({m, 3});
    EXPECT_TRUE(all_close(fast(x), f(x), 1e-5, 1e-6)) << m;
  }
  EXPECT_EQ(compilations(logs), 2u) << logs.all();
  EXPECT_EQ(logs.count("size guard failed"), 1u) << logs.all();
}

}  // namespace
}  // namespace kiln
