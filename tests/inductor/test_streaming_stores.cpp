// Streaming (non-temporal) stores in generated CPU kernels (streaming_stores.h): which outputs
// stream and how the nest fences them, against eager on the same inputs (rows whose starts are
// aligned to the vector and rows whose are not, forward and backward, every mode), and the
// option's values.
#include "capture/capture_test_util.h"
#include "inductor/streaming_stores.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;
using testing::occurrences;

CompileOptions streaming(const std::string& value, const std::string& mode = "default") {
  return {
      .mode = mode, .backend = std::string("inductor"), .options = {{"streaming_stores", value}}};
}

Tensor layer_norm_rows(const Tensor& x, const Tensor& w, const Tensor& b) {
  return layer_norm(x, {x.size(-1)}, w, b, 1e-5);
}

TEST(StreamingStores, ThresholdFollowsTheOption) {
  EXPECT_EQ(inductor::streaming_store_threshold(std::nullopt, 32 << 20), 32 << 20);
  EXPECT_EQ(inductor::streaming_store_threshold("auto", 1 << 20), 1 << 20);
  EXPECT_EQ(inductor::streaming_store_threshold("auto", std::nullopt), std::nullopt);
  EXPECT_EQ(inductor::streaming_store_threshold("true", 32 << 20), 0);
  EXPECT_EQ(inductor::streaming_store_threshold("true", std::nullopt), 0);
  EXPECT_EQ(inductor::streaming_store_threshold("false", 32 << 20), std::nullopt);
  try {
    inductor::streaming_store_threshold("yes", 32 << 20);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("streaming_stores"), std::string::npos) << what;
    EXPECT_NE(what.find("\"yes\""), std::string::npos) << what;
  }
  // Linux says what its caches are; the largest level is at least a megabyte-scale cache on any
  // machine this runs on, and no larger than a terabyte.
  if (const auto bytes = inductor::last_level_cache_bytes()) {
    EXPECT_GE(*bytes, int64_t{64} << 10);
    EXPECT_LE(*bytes, int64_t{1} << 40);
  }
}

// Layer norm over rows of 256 (vector-aligned rows) and 33 (rows starting anywhere: the
// unaligned stores fall back to plain ones) with every store streamed: one nest whose output
// loop streams, in a parallel region each thread fences before it joins; results as eager's.
TEST(StreamingStores, LayerNormRowsStreamTheirOutputAndMatchEager) {
  for (const int64_t width : {256, 33}) {
    SCOPED_TRACE(width);
    LogCapture logs("output_code");
    auto f = compile(layer_norm_rows, streaming("true"));
    manual_seed(21);
    const Tensor x = randn({64, width}) * 3.0, w = randn({width}), b = randn({width});
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close(f(x, w, b), layer_norm_rows(x, w, b), 1e-5, 1e-5));
    const std::string kernels = logs.generated_kernels();
    EXPECT_EQ(occurrences(kernels, ".store_stream(&b"), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "#pragma omp for nowait"), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "kiln_stream_fence();"), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "#pragma omp parallel for"), 0u) << kernels;
  }
}

// A flat pointwise chain: long (chunks the threads share) and short (one loop on one thread,
// fenced after it); against eager exactly where the formula is the same code.
TEST(StreamingStores, PointwiseChainsStreamInChunksAndAlone) {
  auto body = [](const Tensor& x, const Tensor& y) { return (x * y + 1.0).relu() - x / 4.0; };
  for (const int64_t n : {int64_t{100003}, int64_t{1000}}) {
    SCOPED_TRACE(n);
    LogCapture logs("output_code");
    auto f = compile(body, streaming("true"));
    manual_seed(22);
    const Tensor x = randn({n}), y = randn({n});
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close(f(x, y), body(x, y), 1e-6, 1e-7));
    const std::string kernels = logs.generated_kernels();
    EXPECT_EQ(occurrences(kernels, ".store_stream(&b"), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "kiln_stream_fence();"), 1u) << kernels;
    EXPECT_EQ(occurrences(kernels, "#pragma omp for nowait"), n > 4096 ? 1u : 0u) << kernels;
  }
}

// What must not stream: softmax's output (its exponentials are written there, then read back and
// scaled in place: a streamed store would leave the row outside the caches); integer and bool
// outputs; anything with "false"; small outputs under "auto".
TEST(StreamingStores, OutputsReadInTheNestOrSmallOrNotFloatDoNotStream) {
  const auto kernels_of = [](const CompileOptions& options, auto body, const auto&... args) {
    LogCapture logs("output_code");
    auto f = compile(body, options);
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close(f(args...), body(args...), 1e-5, 1e-6));
    return logs.generated_kernels();
  };
  manual_seed(23);
  const Tensor x = randn({64, 256}), w = randn({256}), b = randn({256});
  const std::string softmax = kernels_of(
      streaming("true"), [](const Tensor& a) { return a.softmax(-1); }, x);
  EXPECT_EQ(occurrences(softmax, "store_stream"), 0u) << softmax;
  const std::string integers = kernels_of(
      streaming("true"), [](const Tensor& a) { return (a * 10.0).to(DType::Int32) + 1; }, x);
  EXPECT_EQ(occurrences(integers, "store_stream"), 0u) << integers;
  const std::string off = kernels_of(streaming("false"), layer_norm_rows, x, w, b);
  EXPECT_EQ(occurrences(off, "store_stream"), 0u) << off;
  EXPECT_EQ(occurrences(off, "kiln_stream_fence"), 0u) << off;
  EXPECT_EQ(occurrences(off, "#pragma omp parallel for"), 1u) << off;
  // 64 KiB of output is below any machine's last-level cache.
  const std::string small = kernels_of(streaming("auto"), layer_norm_rows, x, w, b);
  EXPECT_EQ(occurrences(small, "store_stream"), 0u) << small;
}

// A training step through layer norm and GELU with every store streamed, in each CPU mode (the
// max-autotune variants included): the output and the gradients as eager's. (The forward's
// output row is updated in place and the backward's input gradient is what streams.)
TEST(StreamingStores, TrainingStepsMatchEagerInEveryMode) {
  manual_seed(24);
  const Tensor x0 = randn({48, 40}), w0 = randn({40}), b0 = randn({40}), g = randn({48, 40});
  auto body = [](const Tensor& a, const Tensor& w, const Tensor& b) {
    return nn::functional::gelu(layer_norm_rows(a, w, b)) * 2.0;
  };
  const auto step = [&](auto&& f) {
    Tensor a = x0.detach().set_requires_grad(true), w = w0.detach().set_requires_grad(true),
           b = b0.detach().set_requires_grad(true);
    Tensor y = f(a, w, b);
    (y * g).sum().backward();
    return std::vector<Tensor>{y.detach(), a.grad(), w.grad(), b.grad()};
  };
  const std::vector<Tensor> want = step(body);
  for (const std::string mode : {"default", "reduce-overhead", "max-autotune"}) {
    SCOPED_TRACE(mode);
    LogCapture logs("output_code,perf_hints");
    auto compiled = compile(body, streaming("true", mode));
    const std::vector<Tensor> got = step(compiled);
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_TRUE(all_close(got[i], want[i], 1e-4, 1e-5));
    }
    EXPECT_GE(occurrences(logs.generated_kernels(), ".store_stream(&b"), 1u);
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  }
}

TEST(StreamingStores, AnUnknownValueIsAnErrorNamingTheOption) {
  auto f = compile(layer_norm_rows, streaming("sometimes"));
  const Tensor x = randn({4, 8}), w = randn({8}), b = randn({8});
  autograd::NoGradGuard no_grad;
  try {
    f(x, w, b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"streaming_stores\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
