// embedding_bag (aten _embedding_bag and the kiln::embedding_bag wrapper): sum/mean/max bags,
// empty bags, per_sample_weights, padding_idx, include_last_offset, 2-D indices, layouts, the
// bookkeeping outputs, and bad offsets/indices. References are loops over the weight values.
#include "test_view_util.h"

#include <kiln/ops/indexing.h>
#include <kiln/ops/random.h>

#include <algorithm>

namespace kiln {
namespace {

using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

Tensor idx(std::vector<int64_t> v) { return from_vector(v); }
Tensor idx(std::vector<int64_t> v, IntList shape) { return from_vector(v, shape); }

TEST(EmbeddingBag, SumMeanMaxHandComputed) {
  Tensor w = iota({5, 2});  // row r: 2r, 2r+1
  Tensor i = idx({1, 3, 4, 0});
  Tensor o = idx({0, 2, 2});  // bags {1,3}, {}, {4,0}
  EXPECT_EQ(values(embedding_bag(w, i, o, 0)), (V{8, 10, 0, 0, 8, 10}));
  EXPECT_EQ(values(embedding_bag(w, i, o, 1)), (V{4, 5, 0, 0, 4, 5}));
  EXPECT_EQ(values(embedding_bag(w, i, o, 2)), (V{6, 7, 0, 0, 8, 9}));
  // per_sample_weights scale each row in sum mode.
  EXPECT_EQ(values(embedding_bag(w, i, o, 0, tensor({1.0, 0.5, 2.0, -1.0}).to(kFloat64))),
            (V{5, 6.5, 0, 0, 16, 17}));
  // padding_idx rows are left out (and do not count for the mean).
  EXPECT_EQ(values(embedding_bag(w, i, o, 1, {}, false, 3)), (V{2, 3, 0, 0, 4, 5}));
  // Negative padding_idx counts from the end, as in torch.nn.functional.embedding_bag.
  EXPECT_EQ(values(embedding_bag(w, i, o, 0, {}, false, -1)), (V{8, 10, 0, 0, 0, 1}));
  EXPECT_EQ(values(embedding_bag(w, i, o, 0, {}, false, -2)), (V{2, 3, 0, 0, 8, 10}));
  // include_last_offset: the final offset closes the last bag.
  EXPECT_EQ(values(embedding_bag(w, i, idx({0, 2, 4}), 0, {}, true)), (V{8, 10, 8, 10}));
}

TEST(EmbeddingBag, FixedBagsFrom2DIndices) {
  Tensor w = iota({5, 2}, kFloat32);
  Tensor r = embedding_bag(w, idx({0, 1, 2, 4, 4, 4}, {2, 3}), {}, 1);
  EXPECT_EQ(r.sizes(), IntList({2, 2}));
  EXPECT_EQ(values(r), (V{2, 3, 8, 9}));
  EXPECT_EQ(embedding_bag(w, idx({}, {3, 0}), {}, 0).sizes(), IntList({3, 2}));
  EXPECT_EQ(values(embedding_bag(w, idx({}, {3, 0}), {}, 0)), V(6, 0.0));
}

TEST(EmbeddingBag, RandomAgainstLoop) {
  Tensor w = randn({20, 7}, kFloat64);
  Tensor wt = w.t().contiguous().t();  // non-contiguous rows
  Tensor i = randint(0, 20, {50}, kInt64);
  std::vector<int64_t> off{0, 3, 3, 10, 22, 40, 49};
  Tensor psw = rand({50}, kFloat64);
  const V wv = values(w), sv = values(psw);
  const std::vector<double> iv = values(i);
  for (int64_t mode : {0, 1, 2}) {
    for (bool weighted : {false, true}) {
      if (weighted && mode != 0) continue;
      V expected;
      for (size_t b = 0; b < off.size(); ++b) {
        const int64_t begin = off[b], end = b + 1 < off.size() ? off[b + 1] : 50;
        for (int64_t c = 0; c < 7; ++c) {
          double acc = mode == 2 ? -1e300 : 0;
          for (int64_t k = begin; k < end; ++k) {
            const double v = wv[static_cast<size_t>(iv[static_cast<size_t>(k)] * 7 + c)];
            const double s = weighted ? sv[static_cast<size_t>(k)] : 1.0;
            acc = mode == 2 ? std::max(acc, v) : acc + v * s;
          }
          if (end == begin) acc = 0;
          if (mode == 1 && end > begin) acc /= static_cast<double>(end - begin);
          expected.push_back(acc);
        }
      }
      const V got = values(
          embedding_bag(wt, i.to(kInt32), idx(off).to(kInt32), mode, weighted ? psw : Tensor()));
      ASSERT_EQ(got.size(), expected.size());
      for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], expected[k], 1e-12);
    }
  }
}

TEST(EmbeddingBag, BookkeepingOutputs) {
  static const auto& op = ops::OpRegistry::instance().get("_embedding_bag");
  Tensor w = iota({6, 3}, kFloat32);
  Tensor i = idx({1, 2, 4, 5, 4, 3});
  Tensor o = idx({0, 2, 2, 5});
  auto run = [&](int64_t mode, Tensor weight, int64_t pad = -1) {
    return ops::call(op, {weight, i, o, false, mode, false, ops::IValue(), false, pad});
  };
  std::vector<Tensor> r = run(0, w);
  EXPECT_EQ(r[1].sizes(), IntList({0}));  // PyTorch's float sum path keeps no offset2bag
  EXPECT_EQ(values(r[2]), (V{0, 0, 0, 0}));
  r = run(0, w.to(kFloat64));
  EXPECT_EQ(values(r[1]), (V{0, 0, 2, 2, 2, 3}));
  r = run(1, w, 4);
  EXPECT_EQ(values(r[1]), (V{0, 0, 2, 2, 2, 3}));
  EXPECT_EQ(values(r[2]), (V{2, 0, 1, 1}));
  EXPECT_EQ(values(r[3]), (V{2, 0, 1, 1}));
  r = run(2, w);
  EXPECT_EQ(r[3].sizes(), IntList({4, 3}));
  EXPECT_EQ(values(r[3]), (V{2, 2, 2, 0, 0, 0, 5, 5, 5, 3, 3, 3}));
  EXPECT_EQ(values(r[0]).at(6), 15.0);
}

TEST(EmbeddingBag, Errors) {
  Tensor w = iota({6, 2}, kFloat32);
  Tensor i = idx({1, 2, 3});
  EXPECT_TRUE(throws_error([&] { embedding_bag(w, i, idx({0, 2, 1})); }, {"non-decreasing"}));
  EXPECT_TRUE(throws_error([&] { embedding_bag(w, i, idx({1, 2})); }, {"offsets[0] has to be 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        embedding_bag(w, i, idx({0, 4}));
      },
      {"can not be greater than input's length 3"}));
  EXPECT_TRUE(throws_error([&] { embedding_bag(w, idx({6}), idx({0})); },
                           {"index 6 is out of bounds for dimension 0 with size 6"}));
  EXPECT_THROW(embedding_bag(w, idx({6}), idx({0})), IndexError);
  EXPECT_THROW(embedding_bag(w, i, idx({0}), 1, tensor({1.0f, 1.0f, 1.0f})), Error);
  EXPECT_THROW(embedding_bag(w, i, idx({0}), 0, tensor({1.0f, 1.0f})), Error);
  EXPECT_THROW(embedding_bag(w, i, idx({0}), 3), Error);
  EXPECT_THROW(embedding_bag(iota({6, 2}, kInt64), i, idx({0})), TypeError);
  EXPECT_THROW(embedding_bag(w, tensor({1.0f}), idx({0})), TypeError);
  EXPECT_THROW(embedding_bag(w, idx({1, 2}, {1, 2}), idx({0})), Error);
  EXPECT_THROW(embedding_bag(w, i, idx({0}), 0, {}, false, 6), Error);
}

}  // namespace
}  // namespace kiln
