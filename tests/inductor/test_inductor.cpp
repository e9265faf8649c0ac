// The inductor backend against eager: pointwise chains fused into one generated loop nest,
// reductions, views folded into indexing, integer and bool arithmetic, softmax and layer norm, and
// compiled inference and training of the small reference models; compiler failures.
#include "capture/capture_test_util.h"
#include "inductor/mlp_training_check.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;
using testing::occurrences;

CompileOptions inductor() { return {.backend = std::string("inductor")}; }

// Sets an environment variable for a scope, restoring what was there.
struct EnvScope {
  std::string name;
  std::optional<std::string> saved;
  EnvScope(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* old = std::getenv(name.c_str())) saved = old;
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~EnvScope() {
    if (saved) {
      setenv(name.c_str(), saved->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Generated kernels in the logged source.
size_t kernels_in(const LogCapture& logs) {
  size_t n = 0;
  for (const std::string& r : logs.records) {
    for (size_t at = r.find("extern \"C\" void"); at != std::string::npos;
         at = r.find("extern \"C\" void", at + 1)) {
      ++n;
    }
  }
  return n;
}

TEST(Inductor, APointwiseChainIsOneVectorizedLoopNest) {
  LogCapture logs("output_code,perf_hints");
  auto body = [](const Tensor& x, const Tensor& y) {
    return ((x.sin() * y + 1.0).relu() - x.exp() / (y * y + 2.0)).tanh();
  };
  auto f = compile(body, inductor());
  manual_seed(1);
  const Tensor x = randn({64, 33});
  const Tensor y = randn({64, 33});
  {
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close(f(x, y), body(x, y), 1e-5, 1e-6));
  }
  EXPECT_EQ(kernels_in(logs), 1u) << logs.all();
  // Every loop explicitly vectorized (kiln's Vec type), each followed by its scalar tail (64 x 33:
  // 33 is no multiple of the vector width); sin(x) * y + 1, read twice by relu's decomposition, is
  // computed once into a local row.
  const std::string kernels = logs.generated_kernels();
  EXPECT_GE(occurrences(kernels, ".store(&b"), 1u) << kernels;
  EXPECT_EQ(occurrences(kernels, ".store(&b"), occurrences(kernels, "#pragma omp simd")) << kernels;
  EXPECT_EQ(occurrences(kernels, "vec_sin("), 1u) << kernels;
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

// Softmax and layer norm over rows: each one parallel loop over the rows whose kernels (max, exp
// and sum, output; mean, variance, output) run per row with vector loops, the row's statistics
// in local arrays.
TEST(Inductor, SoftmaxAndLayerNormAreOneVectorizedLoopNestEach) {
  for (const bool softmax : {true, false}) {
    LogCapture logs("output_code");
    auto body = [softmax](const Tensor& x, const Tensor& w, const Tensor& b) {
      return softmax ? x.softmax(-1) : layer_norm(x, {x.size(-1)}, w, b, 1e-5);
    };
    auto f = compile(body, inductor());
    manual_seed(11);
    const Tensor x = randn({64, 256}) * 2.0;
    const Tensor w = randn({256});
    const Tensor b = randn({256});
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close(f(x, w, b), body(x, w, b), 1e-5, 1e-5));
    const std::string kernels = logs.generated_kernels();
    EXPECT_EQ(kernels_in(logs), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "#pragma omp parallel for"), 1u) << kernels;
    EXPECT_GE(occurrences(kernels, "VecF::load(&b"), 3u) << kernels;
    EXPECT_GE(occurrences(kernels, "reduce_"), 2u) << kernels;
    if (softmax) {
      // exp(x - max) once per element, in one loop (its scalar tail calls expf once) that
      // stores it straight into the output row (b1) and sums it; the output is then scaled in
      // place. Local arrays hold only the row's max and sum.
      EXPECT_EQ(occurrences(kernels, "expf("), 1u) << kernels;
      EXPECT_GE(occurrences(kernels, "vec_exp("), 1u) << kernels;
      EXPECT_EQ(occurrences(kernels, "alignas(64) float"), 2u) << kernels;
      EXPECT_GE(occurrences(kernels, ".store(&b1["), 2u) << kernels;
    }
  }
}

// Layer norm as training saves it (native_layer_norm: the output, and each row's mean and rstd)
// over (batch, seq, hidden): the rows' statistics are computed in the same nest as the output,
// whose parallel loop covers batch and sequence (both leading loops), not the batch alone: rstd
// per row is a pointwise kernel with no loop of its own there.
TEST(Inductor, LayerNormStatisticsShareTheRowsLoop) {
  LogCapture logs("output_code");
  auto body = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return native_layer_norm(x, {x.size(-1)}, w, b, 1e-5);
  };
  auto f = compile(body, inductor());
  manual_seed(12);
  const Tensor x = randn({4, 24, 96}) * 2.0 + 1.0;
  const Tensor w = randn({96});
  const Tensor b = randn({96});
  autograd::NoGradGuard no_grad;
  const auto got = f(x, w, b);
  const auto want = body(x, w, b);
  EXPECT_TRUE(all_close(std::get<0>(got), std::get<0>(want), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(std::get<1>(got), std::get<1>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<2>(got), std::get<2>(want), 1e-5, 1e-6));
  const std::string kernels = logs.generated_kernels();
  EXPECT_EQ(kernels_in(logs), 1u) << kernels;
  EXPECT_EQ(occurrences(kernels, "#pragma omp parallel for collapse(2)"), 1u) << kernels;
  // The mean and the variance sum their elements plainly; each row's sums are scaled by 1/96
  // once, outside the loops, not every element inside them.
  EXPECT_GE(occurrences(kernels, "acc_vec0 = (acc_vec0 + v0);"), 1u) << kernels;
  EXPECT_EQ(occurrences(kernels, "const VecF v2 = (v0 * v1);"), 0u) << kernels;
}

// var_mean over rows of float16 values whose sum leaves float16's range (4096 values near 100:
// 409600 > 65504) while their mean does not: compiled as eager, no infinity (16-bit rows keep
// per-element scaling; float32 rows are summed plainly, then scaled).
TEST(Inductor, VarMeanOfHalfRowsStaysInRange) {
  auto body = [](const Tensor& x) { return var_mean(x, {1}, Scalar(1), /*keepdim=*/true); };
  auto f = compile(body, inductor());
  manual_seed(13);
  const Tensor x = (randn({4, 4096}) + 100.0).to(DType::Float16);
  autograd::NoGradGuard no_grad;
  const auto got = f(x);
  const auto want = body(x);
  for (const Tensor& t : {std::get<0>(got), std::get<1>(got)}) {
    EXPECT_TRUE(t.isfinite().all().item<bool>()) << t;
  }
  EXPECT_TRUE(all_close(std::get<1>(got).to(DType::Float32), std::get<1>(want).to(DType::Float32),
                        1e-3, 1e-3));
  EXPECT_TRUE(all_close(std::get<0>(got).to(DType::Float32), std::get<0>(want).to(DType::Float32),
                        1e-2, 1e-3));
}

// BENCHMARKS.md's pointwise workload: the compiled module calls the vector variants (GNU vector
// ABI names, _ZGV...) of sincos, sin, cos, exp and tanh, so its loop vectorized (when the compiler
// is g++; clang keeps scalar calls).
// The generated float exp (the vector loop's, AVX-512's scaling or the integer exponent's by the
// machine) against exp in float64 rounded once: within 2 ulps over the whole range, subnormal
// results within 2 of their spacing, overflow to inf, underflow to 0, NaN and infinities as libm.
TEST(Inductor, GeneratedExpIsWithinTwoUlpsOfFloat64) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               -1.0f,
                               88.72f,
                               88.73f,
                               89.5f,
                               1000.0f,
                               -87.3f,
                               -95.0f,
                               -103.2f,
                               -103.97f,
                               -104.5f,
                               -1000.0f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i <= 20000; ++i) values.push_back(-110.0f + 0.01f * static_cast<float>(i));
  const Tensor x = from_vector(values);
  auto f = compile([](const Tensor& a) { return a.exp(); }, inductor());
  autograd::NoGradGuard no_grad;
  const Tensor y = f(x);
  const float* got = y.data_ptr<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    const float want = static_cast<float>(std::exp(static_cast<double>(values[i])));
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      continue;
    }
    if (std::isinf(want) || want == 0.0f) {
      EXPECT_EQ(got[i], want) << "exp(" << values[i] << ")";
      continue;
    }
    // An ulp at the result (the subnormal spacing below the normal range).
    const float ulp = std::max(std::nextafter(want, std::numeric_limits<float>::infinity()) - want,
                               std::numeric_limits<float>::denorm_min());
    EXPECT_LE(std::abs(got[i] - want), 2 * ulp)
        << "exp(" << values[i] << ") = " << got[i] << ", want " << want;
  }
}

TEST(Inductor, TranscendentalFunctionsVectorize) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln_inductor_vec_" + std::to_string(getpid()));
  {
    EnvScope cache("KILN_CACHE_DIR", dir.string());
    auto body = [](const Tensor& x) { return x.sin() * x.cos() + (-x * x).exp() * 0.5 + x.tanh(); };
    auto f = compile(body, inductor());
    const Tensor x = randn({10000});
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close(f(x), body(x), 1e-5, 1e-6));
  }
  std::string symbols;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() == "module.so") symbols += read_file(entry.path());
  }
  const char* cxx = std::getenv("KILN_CXX");
  if (cxx == nullptr || std::string(cxx).find("clang") == std::string::npos) {
    // sin and cos of x: one sincos in the vector loop (the scalar tail's loop has its own).
    for (const char* f : {"vl4l4_sincosf", "v_sinf", "v_cosf", "v_expf", "v_tanhf"}) {
      EXPECT_NE(symbols.find(std::string("_ZGV")), std::string::npos);
      EXPECT_NE(symbols.find(f), std::string::npos) << f << " has no vector variant call";
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(Inductor, BroadcastingAndViewsFoldIntoIndexing) {
  LogCapture logs("output_code");
  auto body = [](const Tensor& x, const Tensor& b) {
    Tensor t = x.transpose(0, 1).narrow(0, 1, 5);  // [5, 8] view of x [8, 7]
    return (t + b.unsqueeze(0)).expand({2, 5, 8}).sum(0) * 0.5;
  };
  auto f = compile(body, inductor());
  manual_seed(2);
  const Tensor x = randn({8, 7});
  const Tensor b = randn({8});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close(f(x, b), body(x, b), 1e-5, 1e-6));
  EXPECT_EQ(logs.count("copy"), 0u) << logs.all();
}

TEST(Inductor, Reductions) {
  auto body = [](const Tensor& x) {
    return std::make_tuple(x.sum({1}, true), x.amax({0}), x.mean({0, 2}), x.var({2}),
                           x.logsumexp({1}), x.argmax(1), x.std({1}, true));
  };
  auto f = compile(body, inductor());
  manual_seed(3);
  const Tensor x = randn({4, 6, 5});
  autograd::NoGradGuard no_grad;
  auto got = f(x);
  auto want = body(x);
  EXPECT_TRUE(all_close(std::get<0>(got), std::get<0>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<1>(got), std::get<1>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<2>(got), std::get<2>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<3>(got), std::get<3>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<4>(got), std::get<4>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<5>(got).to(kFloat64), std::get<5>(want).to(kFloat64), 0, 0));
  EXPECT_TRUE(all_close(std::get<6>(got), std::get<6>(want), 1e-5, 1e-6));
}

// Dividing by a value computed ahead of the vector loop multiplies by its reciprocal (rounded
// once more: within one ulp of the quotient), except where the reciprocal is not normal (a tiny
// or huge divisor), and exactly for divisors whose reciprocal is exact (0, infinities, NaN).
// Sums over rows (a bias gradient: [batch, features].sum(0)) run with the features innermost:
// blocks of columns in parallel, each summing row after row into partial sums (a vector loop),
// not one strided column at a time. Sizes not multiples of the block, more rows than a float
// block (4096), an outer dimension, and float64; against a float64 reference.
TEST(Inductor, SumsOverRowsRunAlongTheColumns) {
  struct Case {
    std::vector<int64_t> sizes;
    int64_t dim;
    DType dtype;
  };
  for (const Case& c : {Case{{5000, 70}, 0, kFloat32}, Case{{3, 37, 130}, 1, kFloat32},
                        Case{{64, 1024}, 0, kFloat32}, Case{{300, 65}, 0, kFloat64}}) {
    SCOPED_TRACE(::testing::PrintToString(c.sizes));
    LogCapture logs("output_code");
    const int64_t dim = c.dim;
    auto body = [dim](const Tensor& x) { return (x * 2.0 + 1.0).sum({dim}); };
    auto f = compile(body, inductor());
    manual_seed(12);
    const Tensor x = randn(c.sizes).to(c.dtype);
    autograd::NoGradGuard no_grad;
    const Tensor want = body(x.to(kFloat64)).to(c.dtype);
    EXPECT_TRUE(all_close(f(x), want, 1e-5, 1e-4));
    const std::string kernels = logs.generated_kernels();
    EXPECT_EQ(occurrences(kernels, "part0[i"), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "blk < "), 1u) << kernels;
  }
  // A sum along the contiguous dimension keeps the row-wise form.
  LogCapture logs("output_code");
  auto rows = compile([](const Tensor& x) { return x.sum({1}); }, inductor());
  const Tensor x = randn({64, 1024});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close(rows(x), x.sum({1}), 1e-5, 1e-4));
  EXPECT_EQ(occurrences(logs.generated_kernels(), "part0[i"), 0u) << logs.generated_kernels();
}

// Batch norm's statistics of a channels-last activation (sums over N, H and W with C innermost
// in memory) run along the channels like the sums above: the mean and the variance (which reads
// the mean) in two sweeps of each block of channels, the backward's two sums in one sweep. A
// training step through batch norm on a channels-last input (24 channels: a block of 16 and one
// of 8; N apart from H and W: two reduction loops), compiled vs eager: the output and the
// gradients of the input, weight and bias; no generated sum reads a channel with the row stride.
TEST(Inductor, ChannelsLastBatchNormStatisticsRunAlongTheChannels) {
  manual_seed(14);
  const Tensor x = randn({2, 24, 20, 20}).contiguous(MemoryFormat::ChannelsLast);
  const Tensor w0 = randn({24}), b0 = randn({24}), g = randn({2, 24, 20, 20});
  auto body = [](const Tensor& a, const Tensor& w, const Tensor& b) {
    return nn::functional::batch_norm(a, Tensor(), Tensor(), w, b, /*training=*/true).relu();
  };
  const auto step = [&](auto&& f) {
    Tensor a = x.detach().set_requires_grad(true), w = w0.detach().set_requires_grad(true),
           b = b0.detach().set_requires_grad(true);
    Tensor y = f(a, w, b);
    (y * g).sum().backward();
    return std::vector<Tensor>{y.detach(), a.grad(), w.grad(), b.grad()};
  };
  LogCapture logs("output_code");
  auto compiled = compile(body, inductor());
  const std::vector<Tensor> got = step(compiled), want = step(body);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(all_close(got[i], want[i], 1e-4, 1e-4));
  }
  const std::string kernels = logs.generated_kernels();
  // The forward's nest (mean, then variance: two sweeps) and the backward's (its two sums in
  // one sweep); no row-wise sum.
  EXPECT_EQ(occurrences(kernels, "blk < 2;"), 2u) << kernels;
  EXPECT_EQ(occurrences(kernels, "double total0["), 3u) << kernels;
  EXPECT_GE(occurrences(kernels, "part1[i"), 1u) << kernels;
  EXPECT_EQ(occurrences(kernels, "reduction(+:part)"), 0u) << kernels;
}

// A value of a pointwise body that reads only the innermost loop's variable (a per-column scale:
// here exp and rsqrt of a [96] weight broadcast over [64, 96]; a channels-last batch norm's
// per-channel terms) is computed once per column into an array before the nest, not once per
// element; the vector loop reads the array. Results match eager.
TEST(Inductor, PerColumnValuesAreComputedOncePerColumn) {
  manual_seed(15);
  const Tensor x = randn({64, 96}), w = randn({96});
  auto body = [](const Tensor& a, const Tensor& b) {
    return a * (b * 0.5).exp() + (b * b + 1.0).rsqrt();
  };
  LogCapture logs("output_code");
  auto f = compile(body, inductor());
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close(f(x, w), body(x, w), 1e-5, 1e-6));
  const std::string kernels = logs.generated_kernels();
  EXPECT_EQ(occurrences(kernels, "[96];"), 2u) << kernels;     // two per-column arrays
  EXPECT_EQ(occurrences(kernels, "vec_exp("), 0u) << kernels;  // exp outside the element loop
}

// Loops that every index reads as one run merge after fusion: an NCHW tensor's C, H and W
// (3 x 7 x 9) become one vector loop of 189 (merging stops at 256), a sum over H and W one
// reduction loop of 63; a transposed read keeps W (9) as its own loop; a pooling window computed
// from the positions (index values) is left alone. Results match eager.
TEST(Inductor, ContiguousSpatialLoopsMergeIntoOne) {
  manual_seed(13);
  const Tensor x = randn({2, 3, 7, 9}), y = randn({2, 3, 7, 9}), t = randn({2, 3, 9, 7});
  autograd::NoGradGuard no_grad;
  const auto generated = [](auto&& body, auto&&... args) {
    LogCapture logs("output_code");
    auto f = compile(body, inductor());
    EXPECT_TRUE(all_close(f(args...), body(args...), 1e-5, 1e-5));
    return logs.generated_kernels();
  };
  const std::string pointwise =
      generated([](const Tensor& a, const Tensor& b) { return (a + b).relu(); }, x, y);
  EXPECT_GE(occurrences(pointwise, "(189 - i1_vec_begin)"), 1u) << pointwise;
  const std::string reduction = generated([](const Tensor& a) { return a.sum({2, 3}); }, x);
  EXPECT_GE(occurrences(reduction, " < 63; "), 1u) << reduction;
  const std::string transposed =
      generated([](const Tensor& a, const Tensor& b) { return a + b.transpose(2, 3); }, x, t);
  EXPECT_GE(occurrences(transposed, " < 9; "), 1u) << transposed;
  generated([](const Tensor& a) { return adaptive_avg_pool2d(a, {2, 2}); }, x);
}

TEST(Inductor, ChannelsLastValuesLoopOverTheChannelsInnermost) {
  // A channels-last value is written in memory order: one vector loop over H, W and C (merged),
  // not strided stores along W.
  manual_seed(14);
  const Tensor x = randn({2, 16, 5, 7}).contiguous(MemoryFormat::ChannelsLast);
  auto body = [](const Tensor& a) { return (a * 2).relu(); };
  LogCapture logs("output_code");
  auto f = compile(body, inductor());
  autograd::NoGradGuard no_grad;
  const Tensor got = f(x), want = body(x);
  EXPECT_TRUE(got.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(got.strides(), want.strides());
  EXPECT_TRUE(all_close(got, want, 1e-6, 1e-6));
  const std::string kernels = logs.generated_kernels();
  EXPECT_GE(occurrences(kernels, "(560 - i1_vec_begin)"), 1u) << kernels;
}

TEST(Inductor, DivisionByALoopInvariantIsWithinOneUlp) {
  auto body = [](const Tensor& x, const Tensor& y) { return x / y; };
  auto f = compile(body, inductor());
  manual_seed(5);
  Tensor x = randn({1003}) * 10.0;
  const float inf = std::numeric_limits<float>::infinity();
  float* special = x.data_ptr<float>();
  special[0] = 0.0F;
  special[1] = inf;
  special[2] = -inf;
  special[3] = std::nanf("");
  autograd::NoGradGuard no_grad;
  for (const float divisor : {3.0F, -7.5F, 1e-40F, 3e38F, 0.0F, -0.0F, inf, std::nanf("")}) {
    SCOPED_TRACE(divisor);
    const Tensor y = full({}, divisor);
    const Tensor got = f(x, y).contiguous(), want = body(x, y).contiguous();
    const bool exact = !std::isnormal(1.0F / divisor);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float g = got.data_ptr<float>()[i], w = want.data_ptr<float>()[i];
      if (std::isnan(w) || exact || std::isinf(w)) {
        EXPECT_TRUE((std::isnan(g) && std::isnan(w)) || g == w) << i << ": " << g << " vs " << w;
      } else {
        EXPECT_LE(std::abs(g - w), std::abs(w) * 1.2e-7F) << i << ": " << g << " vs " << w;
      }
    }
  }
}

TEST(Inductor, IntegerAndBoolArithmeticIsExact) {
  auto body = [](const Tensor& a, const Tensor& b) {
    Tensor m = (a > b) | (a == 3);
    return std::make_tuple(where(m, a * b - 7, a + b), m, (a * 2 + b).abs(), a.floor_divide(3));
  };
  auto f = compile(body, inductor());
  const Tensor a = arange(-6, 6, 1, kInt64).reshape({3, 4});
  const Tensor b = arange(5, -7, -1, kInt64).reshape({3, 4});
  autograd::NoGradGuard no_grad;
  auto got = f(a, b);
  auto want = body(a, b);
  EXPECT_TRUE(all_close(std::get<0>(got).to(kFloat64), std::get<0>(want).to(kFloat64), 0, 0));
  EXPECT_TRUE(all_close(std::get<1>(got).to(kFloat64), std::get<1>(want).to(kFloat64), 0, 0));
  EXPECT_TRUE(all_close(std::get<2>(got).to(kFloat64), std::get<2>(want).to(kFloat64), 0, 0));
  EXPECT_TRUE(all_close(std::get<3>(got).to(kFloat64), std::get<3>(want).to(kFloat64), 0, 0));
}

TEST(Inductor, SoftmaxAndLayerNorm) {
  auto body = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return std::make_tuple(x.softmax(-1), layer_norm(x, {x.size(-1)}, w, b, 1e-5),
                           x.log_softmax(0));
  };
  auto f = compile(body, inductor());
  manual_seed(4);
  const Tensor x = randn({16, 40}) * 3.0;
  const Tensor w = randn({40});
  const Tensor b = randn({40});
  autograd::NoGradGuard no_grad;
  auto got = f(x, w, b);
  auto want = body(x, w, b);
  EXPECT_TRUE(all_close(std::get<0>(got), std::get<0>(want), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<1>(got), std::get<1>(want), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(std::get<2>(got), std::get<2>(want), 1e-5, 1e-5));
}

TEST(Inductor, GradientsThroughGeneratedForwardAndBackward) {
  LogCapture logs("perf_hints");
  auto body = [](const Tensor& x, const Tensor& w) {
    return (x.matmul(w).sigmoid() * x.sum(1, true)).square().mean();
  };
  auto f = compile(body, inductor());
  manual_seed(5);
  const Tensor x = randn({12, 8});
  const Tensor w0 = randn({8, 6});
  Tensor we = w0.clone().requires_grad_();
  Tensor wc = w0.clone().requires_grad_();
  Tensor eager = body(x, we);
  eager.backward();
  Tensor compiled = f(x, wc);
  EXPECT_EQ(compiled.grad_fn()->name(), "CompiledFunctionBackward");
  compiled.backward();
  EXPECT_TRUE(all_close(compiled, eager, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(wc.grad(), we.grad(), 1e-5, 1e-6));
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

TEST(Inductor, MlpTrainingMatchesEager) { testing::expect_mlp_training_matches_eager(inductor()); }

TEST(Inductor, BertInferenceMatchesEager) {
  LogCapture logs("perf_hints");
  manual_seed(8);
  auto model = models::bert({.vocab_size = 100,
                             .hidden_size = 32,
                             .num_hidden_layers = 2,
                             .num_attention_heads = 2,
                             .intermediate_size = 64,
                             .max_position_embeddings = 64});
  model->eval();
  auto compiled = compile(model, inductor());
  const Tensor ids = randint(0, 100, {2, 16});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(ids), model->forward(ids), 1e-4, 1e-5));
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

TEST(Inductor, ResNet18InferenceMatchesEager) {
  LogCapture logs("perf_hints");
  manual_seed(9);
  auto model = models::resnet18(10);
  model->eval();
  auto compiled = compile(model, inductor());
  const Tensor x = randn({2, 3, 32, 32});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), model->forward(x), 1e-4, 1e-5));
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

// A missing C++ compiler: a kiln::Error naming it, or with options{"fallback": "eager"} a warning
// and eager results.
TEST(Inductor, AMissingCompilerIsAClearErrorOrAFallback) {
  // A fresh cache (so nothing compiled earlier is found) and a compiler that does not exist;
  // both variables are restored afterwards.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln_inductor_test_" + std::to_string(getpid()));
  {
    EnvScope cache("KILN_CACHE_DIR", dir.string());
    EnvScope cxx("KILN_CXX", "/nonexistent/kiln-cxx");
    auto body = [](const Tensor& x) { return (x * 1.25).cos(); };
    const Tensor x = randn({5});
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(
        testing::throws_error([&] { compile(body, inductor())(x); }, {"/nonexistent/kiln-cxx"}));
    testing::WarningCapture warnings;
    auto f =
        compile(body, {.backend = std::string("inductor"), .options = {{"fallback", "eager"}}});
    EXPECT_TRUE(all_close(f(x), body(x)));
    ASSERT_EQ(warnings.warnings.size(), 1u);
    EXPECT_NE(warnings.warnings[0].find("runs eagerly"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln
