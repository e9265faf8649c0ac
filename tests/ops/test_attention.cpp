// scaled_dot_product_attention and _scaled_dot_product_flash_attention_for_cpu against a naive
// float64 softmax(q k^T * scale + mask) v computed with loops in this file.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cmath>
#include <limits>
#include <optional>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor randn_t(IntList sizes, DType dtype = kFloat32) {
  return randn(sizes, TensorOptions(kFloat64)).to(dtype);
}

struct Reference {
  Tensor out;  // [B, Hq, L, Ev] float64
  Tensor lse;  // [B, Hq, L] float64 (0 for a row with no key, as aten's kernel gives)
};

// Naive attention on 4-D inputs q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hv, S, Ev]; query head h
// reads key head h / (Hq / Hk). mask: undefined, bool or float, broadcastable to [B, Hq, L, S].
Reference reference(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask,
                    bool causal, std::optional<double> scale_arg = std::nullopt) {
  const int64_t B = q_in.size(0), Hq = q_in.size(1), L = q_in.size(2), E = q_in.size(3);
  const int64_t Hk = k_in.size(1), Hv = v_in.size(1), S = k_in.size(2), Ev = v_in.size(3);
  auto dense = [](const Tensor& t) { return t.to(kFloat64).contiguous(); };
  Tensor q = dense(q_in), k = dense(k_in.expand({B, Hk, S, E})),
         v = dense(v_in.expand({B, Hv, S, Ev}));
  // Masks as float64 additive masks (bool false -> -inf).
  Tensor m;
  if (mask.defined() && mask.dtype() == kBool) {
    m = zeros(mask.sizes(), TensorOptions(kFloat64)).masked_fill(mask.logical_not(), -kInf);
  } else if (mask.defined()) {
    m = mask.to(kFloat64);
  }
  if (m.defined()) m = m.expand({B, Hq, L, S}).contiguous();
  const double* mp = m.defined() ? m.data_ptr<double>() : nullptr;
  const double* qp = q.data_ptr<double>();
  const double* kp = k.data_ptr<double>();
  const double* vp = v.data_ptr<double>();
  const double scale = scale_arg.value_or(1.0 / std::sqrt(static_cast<double>(E)));
  Tensor out = zeros({B, Hq, L, Ev}, TensorOptions(kFloat64));
  Tensor lse = zeros({B, Hq, L}, TensorOptions(kFloat64));
  double* op = out.data_ptr<double>();
  double* lp = lse.data_ptr<double>();
  std::vector<double> s(static_cast<size_t>(S));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk), hv = h / (Hq / Hv);
      for (int64_t i = 0; i < L; ++i) {
        double mx = -kInf;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e) {
            dot += qp[((b * Hq + h) * L + i) * E + e] * kp[((b * Hk + hk) * S + j) * E + e];
          }
          s[j] = dot * scale;
          if (mp) s[j] += mp[((b * Hq + h) * L + i) * S + j];
          if (causal && j > i) s[j] = -kInf;
          mx = std::max(mx, s[j]);
        }
        if (mx == -kInf) continue;  // no key: output and lse stay 0
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += std::exp(s[j] - mx);
        lp[(b * Hq + h) * L + i] = mx + std::log(sum);
        for (int64_t j = 0; j < S; ++j) {
          const double w = std::exp(s[j] - mx) / sum;
          for (int64_t c = 0; c < Ev; ++c) {
            op[((b * Hq + h) * L + i) * Ev + c] += w * vp[((b * Hv + hv) * S + j) * Ev + c];
          }
        }
      }
    }
  }
  return {out, lse};
}

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
            bool causal = false, std::optional<double> scale = std::nullopt, bool gqa = false) {
  return scaled_dot_product_attention(q, k, v, mask, 0.0, causal, scale, gqa);
}

// Float masks hold few distinct values so that the reference reads them exactly.
Tensor float_mask(IntList sizes) { return randn_t(sizes).round(); }

TEST(Attention, MatchesReferenceLDifferentFromS) {
  Tensor q = randn_t({2, 3, 5, 8}), k = randn_t({2, 3, 7, 8}), v = randn_t({2, 3, 7, 4});
  Tensor out = sdpa(q, k, v);
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), false).out, 1e-5, 1e-5));
}

TEST(Attention, Float64) {
  Tensor q = randn_t({2, 3, 9, 8}, kFloat64), k = randn_t({2, 3, 13, 8}, kFloat64),
         v = randn_t({2, 3, 13, 5}, kFloat64);
  Tensor out = sdpa(q, k, v, Tensor(), true);
  EXPECT_EQ(out.dtype(), kFloat64);
  EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), true).out, 1e-12, 1e-12));
}

TEST(Attention, CausalIsTopLeftAlignedForLDifferentFromS) {
  for (auto [L, S] : {std::pair<int64_t, int64_t>{3, 6}, {6, 3}, {70, 130}, {130, 70}}) {
    Tensor q = randn_t({1, 2, L, 16}), k = randn_t({1, 2, S, 16}), v = randn_t({1, 2, S, 16});
    Tensor out = sdpa(q, k, v, Tensor(), true);
    EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), true).out, 1e-5, 1e-5))
        << L << "x" << S;
    // The same as an explicit tril(ones(L, S)) mask.
    Tensor tril_mask = ones({L, S}, TensorOptions(kBool)).tril();
    EXPECT_TRUE(all_close(out, sdpa(q, k, v, tril_mask), 1e-6, 1e-6)) << L << "x" << S;
  }
}

TEST(Attention, BoolMaskBroadcast) {
  Tensor q = randn_t({2, 3, 5, 8}), k = randn_t({2, 3, 7, 8}), v = randn_t({2, 3, 7, 8});
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{5, 7}, {1, 3, 5, 7}, {2, 1, 1, 7}, {7}}) {
    Tensor mask = rand(shape).gt(0.3);
    Tensor out = sdpa(q, k, v, mask);
    EXPECT_TRUE(all_close(out, reference(q, k, v, mask, false).out, 1e-5, 1e-5))
        << fmt::format("{}", fmt::join(shape, ","));
  }
}

TEST(Attention, FloatMaskBroadcast) {
  Tensor q = randn_t({2, 3, 5, 8}), k = randn_t({2, 3, 7, 8}), v = randn_t({2, 3, 7, 8});
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{5, 7}, {3, 1, 7}, {2, 1, 5, 1}}) {
    Tensor mask = float_mask(shape);
    Tensor out = sdpa(q, k, v, mask);
    EXPECT_TRUE(all_close(out, reference(q, k, v, mask, false).out, 1e-5, 1e-5))
        << fmt::format("{}", fmt::join(shape, ","));
  }
  // A float64 mask with float64 inputs, a float32 mask with float64 inputs (PyTorch allows both).
  Tensor q64 = q.to(kFloat64), k64 = k.to(kFloat64), v64 = v.to(kFloat64);
  Tensor m = float_mask({5, 7});
  Reference ref = reference(q64, k64, v64, m, false);
  EXPECT_TRUE(all_close(sdpa(q64, k64, v64, m.to(kFloat64)), ref.out, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(sdpa(q64, k64, v64, m), ref.out, 1e-12, 1e-12));
}

TEST(Attention, MinusInfinityMaskPartOfAKeyBlock) {
  // S = 1000 spans two key blocks; the mask removes half of the first block for every row and the
  // whole second block for some rows.
  const int64_t L = 40, S = 1000;
  Tensor q = randn_t({1, 2, L, 32}), k = randn_t({1, 2, S, 32}), v = randn_t({1, 2, S, 32});
  Tensor mask = zeros({L, S});
  mask.narrow(1, 100, 256).fill_(-kInf);
  mask.narrow(0, 0, 10).narrow(1, 512, 488).fill_(-kInf);
  Tensor out = sdpa(q, k, v, mask);
  EXPECT_TRUE(all_close(out, reference(q, k, v, mask, false).out, 1e-5, 1e-5));
  Tensor bmask = mask.eq(0.0);
  EXPECT_TRUE(all_close(sdpa(q, k, v, bmask), out, 1e-6, 1e-6));
}

TEST(Attention, FullyMaskedRowGivesZeros) {
  // PyTorch 2.15's CPU kernels (flash and math) give 0 for a query row that sees no key.
  Tensor q = randn_t({1, 1, 4, 8}), k = randn_t({1, 1, 6, 8}), v = randn_t({1, 1, 6, 8});
  Tensor mask = ones({4, 6}, TensorOptions(kBool));
  mask.select(0, 2).fill_(0);
  Tensor out = sdpa(q, k, v, mask);
  EXPECT_TRUE(all_close(out.select(2, 2), zeros({1, 1, 8}), 0.0, 0.0));
  EXPECT_TRUE(all_close(out, reference(q, k, v, mask, false).out, 1e-5, 1e-5));
  Tensor fmask = zeros({4, 6});
  fmask.select(0, 2).fill_(-kInf);
  auto [o2, lse] = _scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, false, fmask);
  EXPECT_TRUE(all_close(o2, out, 1e-6, 1e-6));
  EXPECT_EQ(lse.select(2, 2).item<float>(), 0.0f);
}

TEST(Attention, GroupedQueryAttention) {
  Tensor q = randn_t({2, 6, 5, 8}), k = randn_t({2, 2, 7, 8}), v = randn_t({2, 3, 7, 4});
  Tensor out = sdpa(q, k, v, Tensor(), false, std::nullopt, true);
  EXPECT_EQ(IntList(out.sizes()), IntList({2, 6, 5, 4}));
  EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), false).out, 1e-5, 1e-5));
  // 3-D: heads are dim 0.
  Tensor out3 = sdpa(q[0], k[0], v[0], Tensor(), true, std::nullopt, true);
  Reference ref3 =
      reference(q.narrow(0, 0, 1), k.narrow(0, 0, 1), v.narrow(0, 0, 1), Tensor(), true);
  EXPECT_TRUE(all_close(out3, ref3.out[0], 1e-5, 1e-5));
}

TEST(Attention, CustomScale) {
  Tensor q = randn_t({2, 2, 5, 8}), k = randn_t({2, 2, 7, 8}), v = randn_t({2, 2, 7, 8});
  for (double scale : {0.0, 0.05, 2.0}) {
    EXPECT_TRUE(all_close(sdpa(q, k, v, Tensor(), false, scale),
                          reference(q, k, v, Tensor(), false, scale).out, 1e-5, 1e-5))
        << scale;
  }
}

TEST(Attention, BatchRanksZeroToTwoAndBroadcast) {
  // Rank 2: no batch dims.
  Tensor q2 = randn_t({5, 8}), k2 = randn_t({7, 8}), v2 = randn_t({7, 3});
  Tensor out2 = sdpa(q2, k2, v2);
  EXPECT_EQ(IntList(out2.sizes()), IntList({5, 3}));
  Tensor ref2 = reference(q2.view({1, 1, 5, 8}), k2.view({1, 1, 7, 8}), v2.view({1, 1, 7, 3}),
                          Tensor(), false)
                    .out.view({5, 3});
  EXPECT_TRUE(all_close(out2, ref2, 1e-5, 1e-5));
  // Rank 3 query against rank 2 key/value (broadcast), causal.
  Tensor q3 = randn_t({4, 5, 8});
  Tensor out3 = sdpa(q3, k2, v2, Tensor(), true);
  EXPECT_EQ(IntList(out3.sizes()), IntList({4, 5, 3}));
  Tensor ref3 =
      reference(q3.view({1, 4, 5, 8}), k2.view({1, 1, 7, 8}), v2.view({1, 1, 7, 3}), Tensor(), true)
          .out.view({4, 5, 3});
  EXPECT_TRUE(all_close(out3, ref3, 1e-5, 1e-5));
  // Rank 5 query, rank 3 key, rank 4 value: batch dims broadcast to [2, 3, 4].
  Tensor q5 = randn_t({2, 1, 4, 5, 8}), k3 = randn_t({4, 7, 8}), v4 = randn_t({3, 1, 7, 6});
  Tensor mask = rand({3, 1, 5, 7}).gt(0.2);
  Tensor out5 = sdpa(q5, k3, v4, mask);
  EXPECT_EQ(IntList(out5.sizes()), IntList({2, 3, 4, 5, 6}));
  Tensor ref5 = reference(q5.expand({2, 3, 4, 5, 8}).reshape({6, 4, 5, 8}),
                          k3.expand({2, 3, 4, 7, 8}).reshape({6, 4, 7, 8}),
                          v4.expand({2, 3, 4, 7, 6}).reshape({6, 4, 7, 6}),
                          mask.expand({2, 3, 4, 5, 7}).reshape({6, 4, 5, 7}), false)
                    .out.view({2, 3, 4, 5, 6});
  EXPECT_TRUE(all_close(out5, ref5, 1e-5, 1e-5));
}

TEST(Attention, TransposedInputsFromBLHE) {
  // The transformer layout: [B, L, H, E] projections viewed as [B, H, L, E].
  Tensor q = randn_t({2, 9, 4, 16}).transpose(1, 2);
  Tensor k = randn_t({2, 11, 4, 16}).transpose(1, 2);
  Tensor v = randn_t({2, 11, 4, 16}).transpose(1, 2);
  Tensor out = sdpa(q, k, v, Tensor(), true);
  EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), true).out, 1e-5, 1e-5));
  // Output keeps query's layout, like aten's kernel.
  EXPECT_EQ(IntList(out.strides()), IntList({9 * 4 * 16, 16, 4 * 16, 1}));
  // Strides neither BLAS layout accepts directly (every other element of the head dim).
  Tensor qs = randn_t({2, 4, 9, 32}).narrow(3, 0, 32).slice(3, 0, 32, 2);
  Tensor ks = randn_t({2, 4, 11, 32}).slice(3, 0, 32, 2);
  Tensor vs = randn_t({2, 4, 11, 32}).slice(3, 1, 32, 2);
  EXPECT_TRUE(all_close(sdpa(qs, ks, vs), reference(qs, ks, vs, Tensor(), false).out, 1e-5, 1e-5));
}

TEST(Attention, LongSequencesSpanManyBlocks) {
  const int64_t n = 1000;
  Tensor q = randn_t({1, 2, n, 64}), k = randn_t({1, 2, n, 64}), v = randn_t({1, 2, n, 64});
  for (bool causal : {false, true}) {
    Tensor out = sdpa(q, k, v, Tensor(), causal);
    EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), causal).out, 1e-5, 1e-5)) << causal;
  }
}

TEST(Attention, EmptyInputs) {
  Tensor out = sdpa(randn_t({2, 3, 0, 8}), randn_t({2, 3, 7, 8}), randn_t({2, 3, 7, 4}));
  EXPECT_EQ(IntList(out.sizes()), IntList({2, 3, 0, 4}));
  // No keys: every row sees nothing and gives 0, as PyTorch does.
  Tensor none = sdpa(randn_t({2, 5, 8}), randn_t({2, 0, 8}), randn_t({2, 0, 4}));
  EXPECT_TRUE(all_close(none, zeros({2, 5, 4}), 0.0, 0.0));
  Tensor no_batch = sdpa(randn_t({0, 5, 8}), randn_t({0, 7, 8}), randn_t({0, 7, 4}));
  EXPECT_EQ(IntList(no_batch.sizes()), IntList({0, 5, 4}));
}

TEST(Attention, HalfPrecisionComputesInFloat32) {
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor q = randn_t({2, 2, 9, 16}, dt), k = randn_t({2, 2, 12, 16}, dt),
           v = randn_t({2, 2, 12, 16}, dt);
    Tensor out = sdpa(q, k, v, Tensor(), true);
    EXPECT_EQ(out.dtype(), dt);
    const double tol = dt == kFloat16 ? 2e-3 : 1.6e-2;
    EXPECT_TRUE(all_close(out, reference(q, k, v, Tensor(), true).out, tol, tol)) << dtype_name(dt);
  }
}

TEST(Attention, FlashOpReturnsLogSumExp) {
  Tensor q = randn_t({2, 3, 70, 16}), k = randn_t({2, 3, 600, 16}), v = randn_t({2, 3, 600, 16});
  Tensor mask = float_mask({2, 1, 70, 600});
  auto [out, lse] = _scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, true, mask, 0.2);
  Reference ref = reference(q, k, v, mask, true, 0.2);
  EXPECT_TRUE(all_close(out, ref.out, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(lse, ref.lse, 1e-5, 1e-5));
  EXPECT_EQ(lse.dtype(), kFloat32);
  // aten's layouts: logsumexp [B, H, L] stored as [B, L, H]; output like a contiguous query.
  EXPECT_EQ(IntList(lse.strides()), IntList({70 * 3, 1, 3}));
  EXPECT_EQ(IntList(out.strides()), IntList({3 * 70 * 16, 70 * 16, 16, 1}));
  auto [out64, lse64] = _scaled_dot_product_flash_attention_for_cpu(
      q.to(kFloat64), k.to(kFloat64), v.to(kFloat64), 0.0, true, mask.to(kFloat64), 0.2);
  EXPECT_EQ(lse64.dtype(), kFloat64);
  EXPECT_TRUE(all_close(lse64, ref.lse, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(out64, ref.out, 1e-12, 1e-12));
}

TEST(Attention, ResultDoesNotDependOnThreadCount) {
  Tensor q = randn_t({2, 3, 300, 32}), k = randn_t({2, 3, 300, 32}), v = randn_t({2, 3, 300, 32});
  const int threads = get_num_threads();
  set_num_threads(1);
  Tensor one = sdpa(q, k, v, Tensor(), true);
  set_num_threads(std::max(2, threads));
  Tensor many = sdpa(q, k, v, Tensor(), true);
  set_num_threads(threads);
  EXPECT_TRUE(all_close(one, many, 1e-6, 1e-7));
}

// ---- dropout ----

// With q = 0 every key gets weight 1/S; with v = I the output is the weight matrix itself, so
// each element is 0 (dropped) or 1 / (S * (1 - p)) (kept).
Tensor dropout_weights(double p, Generator* gen = nullptr) {
  const int64_t S = 64;
  Tensor q = zeros({4, 64, 8}), k = randn_t({4, S, 8});
  Tensor v = eye(S).expand({4, S, S});
  return scaled_dot_product_attention(q, k, v, Tensor(), p, false, std::nullopt, false, gen);
}

TEST(AttentionDropout, DropsWithProbabilityPAndRescales) {
  const double p = 0.3;
  manual_seed(123);
  Tensor w = dropout_weights(p);
  const double kept_value = 1.0 / (64 * (1 - p));
  int64_t dropped = 0, kept = 0;
  for (double x : testing::values(w)) {
    if (x == 0.0) {
      ++dropped;
    } else {
      ++kept;
      EXPECT_NEAR(x, kept_value, 1e-6);
    }
  }
  const double fraction = static_cast<double>(dropped) / static_cast<double>(dropped + kept);
  // 16384 Bernoulli(0.3) draws: standard deviation 0.0036.
  EXPECT_NEAR(fraction, p, 0.02);
}

TEST(AttentionDropout, SeedingAndGenerators) {
  manual_seed(7);
  Tensor a = dropout_weights(0.5);
  Tensor b = dropout_weights(0.5);
  manual_seed(7);
  Tensor c = dropout_weights(0.5);
  EXPECT_TRUE(all_close(a, c, 0.0, 0.0)) << "same seed, same draw";
  EXPECT_FALSE(all_close(a, b, 0.0, 0.0)) << "consecutive calls draw afresh";
  Generator g1(99), g2(99);
  EXPECT_TRUE(all_close(dropout_weights(0.5, &g1), dropout_weights(0.5, &g2), 0.0, 0.0));
  // The draw does not depend on how the work is split across threads.
  const int threads = get_num_threads();
  Generator g3(5), g4(5);
  set_num_threads(1);
  Tensor one = dropout_weights(0.5, &g3);
  set_num_threads(std::max(2, threads));
  Tensor many = dropout_weights(0.5, &g4);
  set_num_threads(threads);
  EXPECT_TRUE(all_close(one, many, 0.0, 0.0));
}

TEST(AttentionDropout, ZeroProbabilityIsExact) {
  Tensor q = randn_t({2, 5, 8}), k = randn_t({2, 7, 8}), v = randn_t({2, 7, 8});
  EXPECT_TRUE(
      all_close(scaled_dot_product_attention(q, k, v, Tensor(), 0.0), sdpa(q, k, v), 0.0, 0.0));
}

// ---- errors ----

TEST(AttentionErrors, BadArguments) {
  Tensor q = randn_t({2, 3, 5, 8}), k = randn_t({2, 3, 7, 8}), v = randn_t({2, 3, 7, 4});
  const char* op = "scaled_dot_product_attention";
  EXPECT_TRUE(throws_error([&] { sdpa(randn_t({8}), randn_t({8}), randn_t({8})); },
                           {op, "at least 2-dimensional"}));
  EXPECT_TRUE(throws_error([&] { sdpa(q, randn_t({2, 3, 7, 6}), v); }, {op, "(dim -1, 8)", "6"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(q, k, randn_t({2, 3, 6, 4}));
      },
      {op, "sequence length", "[2, 3, 7, 8]", "[2, 3, 6, 4]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(q, k, v, ones({5, 6}, TensorOptions(kBool)));
      },
      {op, "attn_mask of shape [5, 6]", "[2, 3, 5, 7]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(q, k, v, ones({4, 2, 3, 5, 7}, TensorOptions(kBool)));
      },
      {op, "cannot be broadcast"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(q, k, v, ones({5, 7}, TensorOptions(kInt64)));
      },
      {op, "attn_mask", "int64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(q, k, v, ones({5, 7}, TensorOptions(kFloat64)));
      },
      {op, "attn_mask", "float64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(q, k, v, ones({5, 7}, TensorOptions(kBool)), true);
      },
      {op, "is_causal"}));
  for (double p : {-0.1, 1.0, 1.5}) {
    EXPECT_TRUE(throws_error([&] { scaled_dot_product_attention(q, k, v, Tensor(), p); },
                             {op, "dropout_p"}));
  }
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(randn_t({2, 4, 5, 8}), k, v, Tensor(), false, std::nullopt, true);
      },
      {op, "heads of key (3)", "query (4)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        sdpa(randn_t({5, 8}), randn_t({7, 8}), randn_t({7, 8}), Tensor(), false, {}, true);
      },
      {op, "enable_gqa"}));
  // Without enable_gqa, differing head counts must broadcast.
  EXPECT_TRUE(throws_error([&] { sdpa(randn_t({2, 6, 5, 8}), k, randn_t({2, 3, 7, 8})); }, {op}));
  EXPECT_TRUE(throws_error([&] { sdpa(q, k.to(kFloat64), v); }, {op, "same dtype"}));
  EXPECT_TRUE(throws_error([&] { sdpa(q.to(kInt64), k.to(kInt64), v.to(kInt64)); },
                           {op, "floating point"}));
}

TEST(AttentionErrors, FlashOpWantsFourDims) {
  EXPECT_TRUE(throws_error(
      [] {
        _scaled_dot_product_flash_attention_for_cpu(randn_t({3, 5, 8}), randn_t({3, 7, 8}),
                                                    randn_t({3, 7, 8}));
      },
      {"_scaled_dot_product_flash_attention_for_cpu", "4-D"}));
  EXPECT_TRUE(throws_error(
      [] {
        _scaled_dot_product_flash_attention_for_cpu(randn_t({2, 3, 5, 8}), randn_t({3, 3, 7, 8}),
                                                    randn_t({3, 3, 7, 8}));
      },
      {"_scaled_dot_product_flash_attention_for_cpu", "batch size"}));
}

}  // namespace
}  // namespace kiln
