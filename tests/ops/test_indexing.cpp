// index_select, gather, scatter, scatter_add, masked_fill, one_hot, embedding: hand-computed
// values, float64 references for scatter_add, layouts, 0-dim and empty inputs, in-place and out=,
// and every kind of bad input (out-of-range indices raise IndexError naming op, index and size).
#include "test_view_util.h"

#include <kiln/ops/indexing.h>
#include <kiln/ops/shape.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

Tensor idx(std::vector<int64_t> v, IntList shape) { return from_vector(v, shape); }
Tensor idx(std::vector<int64_t> v) { return from_vector(v); }

TEST(IndexSelect, Values) {
  Tensor x = iota({3, 4});  // row r: 4r .. 4r+3
  EXPECT_EQ(values(index_select(x, 0, idx({2, 0, 2}))),
            (V{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(values(index_select(x, 1, idx({3, 1}).to(kInt32))), (V{3, 1, 7, 5, 11, 9}));
  EXPECT_EQ(values(index_select(x.t(), 0, idx({1}))), (V{1, 5, 9}));
  // A strided index.
  Tensor strided_index = idx({2, 9, 0, 9, 1, 9}).slice(0, 0, 6, 2);
  EXPECT_EQ(values(index_select(x, 0, strided_index)), values(cat({x[2], x[0], x[1]})));
  // 0-dim self and 0-dim index.
  EXPECT_EQ(index_select(scalar_tensor(5.0), 0, idx({0})).dim(), 0);
  EXPECT_EQ(values(index_select(x, 0, scalar_tensor(int64_t{1}, kInt64))), (V{4, 5, 6, 7}));
  EXPECT_EQ(index_select(x, 1, idx({})).sizes(), IntList({3, 0}));
  EXPECT_EQ(values(index_select(tensor({true, false}), 0, idx({1, 1, 0}))), (V{0, 0, 1}));
  static const auto& out_op = ops::OpRegistry::instance().get("index_select.out");
  Tensor out = empty({0}, kFloat32);
  ops::call(out_op, {x, 0, idx({1}), out});
  EXPECT_EQ(values(out), (V{4, 5, 6, 7}));
}

TEST(IndexSelect, Errors) {
  Tensor x = iota({5, 2});
  EXPECT_TRUE(throws_error(
      [&] {
        index_select(x, 0, idx({1, 7}));
      },
      {"index_select(): index 7 is out of bounds for dimension 0 with size 5"}));
  EXPECT_THROW(index_select(x, 0, idx({7})), IndexError);
  EXPECT_THROW(index_select(x, 0, idx({-1})), IndexError);
  EXPECT_THROW(index_select(x, 0, tensor({1.0f})), TypeError);
  EXPECT_THROW(index_select(x, 0, idx({1}).to(kInt16)), TypeError);
  EXPECT_TRUE(throws_error([&] { index_select(x, 0, idx({1, 0}, {1, 2})); }, {"vector"}));
  EXPECT_THROW(index_select(x, 2, idx({0})), IndexError);
  EXPECT_THROW(index_select(empty({0, 2}), 0, idx({0})), IndexError);
}

TEST(Gather, Values) {
  Tensor x = iota({2, 3});  // 0 1 2 / 3 4 5
  EXPECT_EQ(values(gather(x, 1, idx({2, 0, 1, 1}, {2, 2}))), (V{2, 0, 4, 4}));
  EXPECT_EQ(values(gather(x, 0, idx({1, 0, 1}, {1, 3}))), (V{3, 1, 5}));
  // Index smaller than self in the other dim; transposed self and index.
  EXPECT_EQ(values(gather(x, 1, idx({1}, {1, 1}))), (V{1}));
  Tensor xt = x.t();                                // 0 3 / 1 4 / 2 5
  Tensor it = idx({1, 0, 0, 1, 1, 1}, {2, 3}).t();  // 1 1 / 0 1 / 0 1 (non-contiguous)
  EXPECT_EQ(values(gather(xt, 1, it)), (V{3, 3, 1, 4, 2, 5}));
  EXPECT_EQ(gather(scalar_tensor(2.5), 0, scalar_tensor(int64_t{0}, kInt64)).item<double>(), 2.5);
  EXPECT_EQ(gather(x, 1, empty({2, 0}, kInt64)).sizes(), IntList({2, 0}));
  EXPECT_EQ(gather(x.to(kInt32), 1, idx({0}, {1, 1})).dtype(), kInt32);
  Tensor b = gather(tensor({true, false}), 0, idx({1, 0, 1}));
  EXPECT_EQ(values(b), (V{0, 1, 0}));
}

TEST(Gather, LargeInputsSplitAcrossThreads) {
  // Several parallel chunks; a bad index deep inside still raises on the caller's thread.
  const int64_t n = 200000;
  Tensor x = iota({1, n}, kFloat32);
  std::vector<int64_t> rev(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rev[static_cast<size_t>(i)] = n - 1 - i;
  Tensor index = from_vector(rev, {1, n});
  std::vector<double> got = values(gather(x, 1, index));
  EXPECT_EQ(got[0], static_cast<double>(n - 1));
  EXPECT_EQ(got[static_cast<size_t>(n - 1)], 0.0);
  EXPECT_EQ(got[150000], static_cast<double>(n - 1 - 150000));
  index.data_ptr<int64_t>()[150000] = n;
  EXPECT_TRUE(
      throws_error([&] { gather(x, 1, index); }, {"gather(): index 200000 is out of bounds"}));
  // masked_fill over the same size with a strided mask.
  Tensor mask = repeat(tensor({true, false}), {n / 2}).view({1, n});
  std::vector<double> filled = values(masked_fill(x, mask, Scalar(-1.0)));
  EXPECT_EQ(filled[100000], -1.0);
  EXPECT_EQ(filled[100001], 100001.0);
}

TEST(Gather, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_error(
      [&] {
        gather(x, 1, idx({0, 3}, {1, 2}));
      },
      {"gather(): index 3 is out of bounds for dimension 1 with size 3"}));
  EXPECT_TRUE(throws_error([&] { gather(x, 1, idx({-1}, {1, 1})); }, {"index -1", "size 3"}));
  EXPECT_THROW(gather(x, 1, idx({-1}, {1, 1})), IndexError);
  EXPECT_THROW(gather(x, 1, idx({0}, {1, 1}).to(kInt32)), TypeError);
  EXPECT_TRUE(throws_error([&] { gather(x, 1, idx({0})); }, {"same number of dimensions"}));
  EXPECT_TRUE(throws_error(
      [&] {
        gather(x, 1, idx({0, 0, 0}, {3, 1}));
      },
      {"Size does not match at dimension 0"}));
  EXPECT_THROW(gather(x, 2, idx({0}, {1, 1})), IndexError);
}

TEST(Scatter, SrcAndValue) {
  Tensor self = zeros({3, 4});
  Tensor src = iota({2, 4}, kFloat32) + 1;  // 1..8
  // dim 0: out[index[i][j]][j] = src[i][j]
  Tensor r = scatter(self, 0, idx({2, 0, 1, 0, 0, 1, 2, 2}, {2, 4}), src);
  EXPECT_EQ(values(r), (V{5, 2, 0, 4, 0, 6, 3, 0, 1, 0, 7, 8}));
  EXPECT_EQ(values(self), V(12, 0.0));  // the functional form leaves self alone
  // dim 1 with index smaller than src.
  Tensor r1 = scatter(zeros({2, 3}), 1, idx({2, 0}, {1, 2}), src);
  EXPECT_EQ(values(r1), (V{2, 0, 1, 0, 0, 0}));
  // Value overload.
  Tensor v = scatter(zeros({2, 3}, kInt64), 1, idx({1, 2}, {2, 1}), Scalar(int64_t{7}));
  EXPECT_EQ(values(v), (V{0, 7, 0, 0, 0, 7}));
  // Non-contiguous self, index and src.
  Tensor st = zeros({4, 2}).t();                   // [2, 4]
  Tensor it = idx({3, 1, 0, 2}, {2, 2}).t();       // 3 0 / 1 2
  Tensor srct = (iota({2, 2}, kFloat32) + 1).t();  // 1 3 / 2 4
  EXPECT_EQ(values(scatter(st, 1, it, srct)), (V{3, 0, 0, 1, 0, 2, 4, 0}));
  // Empty index: a copy of self.
  EXPECT_EQ(values(scatter(iota({2}), 0, empty({0}, kInt64), iota({2}))), (V{0, 1}));
  // 0-dim.
  EXPECT_EQ(scatter(scalar_tensor(1.0), 0, scalar_tensor(int64_t{0}, kInt64), scalar_tensor(9.0))
                .item<double>(),
            9.0);
}

TEST(Scatter, ReduceAndInPlace) {
  Tensor self = full({2, 3}, 2.0);
  Tensor src = full({2, 3}, 3.0);
  Tensor index = idx({0, 1, 0, 0, 0, 2}, {2, 3});
  EXPECT_EQ(values(scatter(self, 1, index, src, "add")), (V{8, 5, 2, 8, 2, 5}));
  EXPECT_EQ(values(scatter(self, 1, index, src, "multiply")), (V{18, 6, 2, 18, 2, 6}));
  EXPECT_TRUE(throws_error([&] { scatter(self, 1, index, src, "max"); }, {"add or multiply"}));
  // The value overload with a reduction.
  EXPECT_EQ(values(scatter(self, 1, index, Scalar(0.5), "add")), (V{3, 2.5, 2, 3, 2, 2.5}));
  EXPECT_EQ(values(scatter(self, 1, index, Scalar(3.0), "multiply")), (V{18, 6, 2, 18, 2, 6}));
  EXPECT_TRUE(
      throws_error([&] { scatter(self, 1, index, Scalar(1.0), "mean"); }, {"add or multiply"}));
  Tensor x = zeros({2, 2});
  scatter_(x, 0, idx({1, 0}, {1, 2}), Scalar(5.0));
  EXPECT_EQ(values(x), (V{0, 5, 5, 0}));
  Tensor base = zeros({2, 2});
  Tensor view = base.t();
  scatter_(view, 1, idx({1}, {1, 1}), tensor({{4.0f}}));
  EXPECT_EQ(values(base), (V{0, 0, 4, 0}));
}

TEST(ScatterAdd, Float64Reference) {
  // Duplicates accumulate; compare against a float64 loop.
  const int64_t rows = 4, cols = 5, n = 7;
  Tensor self = iota({rows, cols}, kFloat32) * 0.5f;
  Tensor index =
      from_vector(std::vector<int64_t>{0, 3, 3, 1, 0, 3, 2, 4, 4, 4, 0, 1, 2, 3}, {2, n});
  Tensor src = (iota({2, n}, kFloat32) * 0.37f) - 1.1f;
  Tensor r = scatter_add(self.slice(0, 0, 2), 1, index, src);
  std::vector<double> expected = values(self.slice(0, 0, 2));
  std::vector<double> s = values(src);
  std::vector<double> ix = values(index);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < n; ++j)
      expected[static_cast<size_t>(i * cols +
                                   static_cast<int64_t>(ix[static_cast<size_t>(i * n + j)]))] +=
          s[static_cast<size_t>(i * n + j)];
  EXPECT_TRUE(all_close(r, from_vector(expected, {2, cols}).to(kFloat32), 1e-6, 1e-6));
  // Integer dtype, in place.
  Tensor counts = zeros({4}, kInt64);
  scatter_add_(counts, 0, idx({1, 3, 1, 1, 0}), ones({5}, kInt64));
  EXPECT_EQ(values(counts), (V{1, 3, 0, 1}));
  // Half accumulates through float.
  Tensor h = scatter_add(zeros({2}, kFloat16), 0, idx({0, 0, 1}),
                         tensor({0.5f, 0.25f, 1.0f}).to(kFloat16));
  EXPECT_EQ(values(h), (V{0.75, 1.0}));
}

TEST(Scatter, Errors) {
  Tensor self = zeros({2, 3});
  Tensor src = ones({2, 3});
  EXPECT_TRUE(throws_error(
      [&] {
        scatter(self, 1, idx({3}, {1, 1}), src);
      },
      {"scatter(): index 3 is out of bounds for dimension 1 with size 3"}));
  EXPECT_THROW(scatter(self, 1, idx({-1}, {1, 1}), src), IndexError);
  EXPECT_THROW(scatter_add(self, 0, idx({2}, {1, 1}), src), IndexError);
  EXPECT_THROW(scatter(self, 1, idx({0}, {1, 1}).to(kInt32), src), TypeError);
  EXPECT_THROW(scatter(self, 1, idx({0}, {1, 1}), src.to(kFloat64)), TypeError);
  EXPECT_TRUE(
      throws_error([&] { scatter(self, 1, idx({0}), src); }, {"same number of dimensions"}));
  EXPECT_TRUE(throws_error(
      [&] {
        scatter(self, 1, idx({0, 0, 0}, {3, 1}), ones({3, 1}));
      },
      {"no larger than self"}));
  EXPECT_TRUE(throws_error(
      [&] {
        scatter_add(self, 1, idx({0, 0, 0}, {1, 3}), ones({1, 2}));
      },
      {"no larger than src"}));
}

TEST(MaskedFill, Values) {
  Tensor x = iota({2, 3});
  Tensor mask = tensor({{true, false, true}, {false, false, true}});
  EXPECT_EQ(values(masked_fill(x, mask, Scalar(-1.0))), (V{-1, 1, -1, 3, 4, -1}));
  // The mask broadcasts; the value may be a 0-dim tensor.
  Tensor row = tensor({false, true, false});
  EXPECT_EQ(values(masked_fill(x, row, scalar_tensor(9.0))), (V{0, 9, 2, 3, 9, 5}));
  // The functional form broadcasts self against the mask too.
  Tensor wide =
      masked_fill(tensor({1.0f, 2.0f}), tensor({{true, false}, {false, true}}), Scalar(0.0));
  EXPECT_EQ(wide.sizes(), IntList({2, 2}));
  EXPECT_EQ(values(wide), (V{0, 2, 1, 0}));
  EXPECT_EQ(values(masked_fill(x.t(), row.view({3, 1}), Scalar(7.0))), (V{0, 3, 7, 7, 2, 5}));
  Tensor ints = masked_fill(iota({3}, kInt32), tensor({true, false, false}), Scalar(int64_t{5}));
  EXPECT_EQ(ints.dtype(), kInt32);
  EXPECT_EQ(values(ints), (V{5, 1, 2}));
  EXPECT_EQ(masked_fill(scalar_tensor(1.0), tensor(true), Scalar(2.0)).item<double>(), 2.0);
  EXPECT_EQ(masked_fill(empty({0, 3}), row, Scalar(2.0)).sizes(), IntList({0, 3}));
  // In place, including through a transposed view.
  Tensor y = iota({2, 2});
  masked_fill_(y, tensor({true, false}), Scalar(-2.0));
  EXPECT_EQ(values(y), (V{-2, 1, -2, 3}));
  Tensor base = iota({2, 2});
  Tensor view = base.t();
  masked_fill_(view, tensor({true, false}), scalar_tensor(8.0));
  EXPECT_EQ(values(base), (V{8, 8, 2, 3}));
}

TEST(MaskedFill, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_THROW(masked_fill(x, tensor({1, 0, 1}), Scalar(1.0)), TypeError);
  EXPECT_TRUE(throws_error(
      [&] {
        masked_fill(x, tensor({true, false}), Scalar(1.0));
      },
      {"3", "2"}));
  EXPECT_TRUE(throws_error(
      [&] {
        masked_fill(x, tensor({true, false, true}), tensor({1.0, 2.0}));
      },
      {"0-dimensional value tensor", "1 dimension"}));
  // In place, self can't grow to the mask's shape.
  Tensor row = iota({3});
  EXPECT_THROW(masked_fill_(row, ones({2, 3}, kBool), Scalar(1.0)), Error);
}

TEST(OneHot, Values) {
  Tensor r = one_hot(idx({2, 0, 1}), 4);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.sizes(), IntList({3, 4}));
  EXPECT_EQ(values(r), (V{0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(one_hot(idx({2, 0})).sizes(), IntList({2, 3}));
  Tensor t = one_hot(idx({0, 1, 1, 0}, {2, 2}).t(), 2);  // 0 1 / 1 0
  EXPECT_EQ(values(t), (V{1, 0, 0, 1, 0, 1, 1, 0}));
  EXPECT_EQ(one_hot(scalar_tensor(int64_t{1}, kInt64), 3).sizes(), IntList({3}));
  EXPECT_EQ(one_hot(empty({0}, kInt64), 5).sizes(), IntList({0, 5}));
  EXPECT_TRUE(throws_error([] { one_hot(empty({0}, kInt64)); }, {"empty tensor"}));
  EXPECT_TRUE(throws_error([] { one_hot(idx({-1})); }, {"non-negative"}));
  EXPECT_TRUE(throws_error([] { one_hot(idx({3}), 3); }, {"smaller than num_classes"}));
  EXPECT_THROW(one_hot(idx({1}).to(kInt32)), TypeError);
}

TEST(Embedding, Values) {
  Tensor w = iota({4, 3});  // row r: 3r .. 3r+2
  Tensor r = embedding(w, idx({3, 0, 3, 1}, {2, 2}));
  EXPECT_EQ(r.sizes(), IntList({2, 2, 3}));
  EXPECT_EQ(values(r), (V{9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5}));
  EXPECT_EQ(values(embedding(w.t().contiguous().t(), idx({2}).to(kInt32))), (V{6, 7, 8}));
  EXPECT_EQ(embedding(w, scalar_tensor(int64_t{1}, kInt64)).sizes(), IntList({3}));
  EXPECT_EQ(embedding(w, empty({0}, kInt64)).sizes(), IntList({0, 3}));
  EXPECT_TRUE(throws_error([&] { embedding(w, idx({4})); },
                           {"embedding(): index 4 is out of bounds for dimension 0 with size 4"}));
  EXPECT_THROW(embedding(w, idx({-1})), IndexError);
  EXPECT_THROW(embedding(w, tensor({1.0f})), TypeError);
  EXPECT_TRUE(throws_error([] { embedding(ones({3}), idx({0})); }, {"2-D"}));
}

TEST(IndexingOut, OutVariantsKeepAtenNames) {
  auto& reg = ops::OpRegistry::instance();
  Tensor x = iota({2, 3});  // 0 1 2 / 3 4 5
  // gather into a transposed out of a wider dtype.
  Tensor base = zeros({2, 2}, kFloat64);
  Tensor out_t = base.t();
  ops::call(reg.get("gather.out"), {x.to(kFloat32), 1, idx({2, 0, 1, 1}, {2, 2}), false, out_t});
  EXPECT_EQ(values(out_t), (V{2, 0, 4, 4}));
  // Overloaded ops: aten's "<overload>_out" names.
  Tensor s_out = empty({0});
  ops::call(reg.get("scatter.src_out"),
            {zeros({2, 2}), 0, idx({1, 0}, {1, 2}), ones({1, 2}), s_out});
  EXPECT_EQ(values(s_out), (V{0, 1, 1, 0}));
  Tensor v_out = empty({2, 2}, kInt64);
  ops::call(reg.get("scatter.value_out"),
            {zeros({2, 2}, kInt64), 1, idx({1}, {1, 1}), Scalar(int64_t{3}), v_out});
  EXPECT_EQ(values(v_out), (V{0, 3, 0, 0}));
  Tensor r_out = empty({0});
  ops::call(reg.get("scatter.reduce_out"),
            {ones({3}), 0, idx({2, 2}), full({2}, 2.0f), std::string("multiply"), r_out});
  EXPECT_EQ(values(r_out), (V{1, 1, 4}));
  Tensor m_out = empty({0});
  ops::call(reg.get("masked_fill.Scalar_out"),
            {x.to(kFloat32), tensor({true, false, false}), Scalar(-1.0), m_out});
  EXPECT_EQ(values(m_out), (V{-1, 1, 2, -1, 4, 5}));
  Tensor mt_out = empty({0});
  ops::call(reg.get("masked_fill.Tensor_out"),
            {x.to(kFloat32), tensor({false, false, true}), scalar_tensor(9.0f), mt_out});
  EXPECT_EQ(values(mt_out), (V{0, 1, 9, 3, 4, 9}));
  Tensor e_out = empty({0});
  ops::call(reg.get("embedding.out"), {x, idx({1}), SymInt(int64_t{-1}), false, false, e_out});
  EXPECT_EQ(values(e_out), (V{3, 4, 5}));
  Tensor a_out = empty({0});
  ops::call(reg.get("scatter_add.out"), {zeros({2}), 0, idx({1, 1}), ones({2}), a_out});
  EXPECT_EQ(values(a_out), (V{0, 2}));
  // An int out can't take a float result.
  Tensor bad = empty({2, 2}, kInt64);
  EXPECT_THROW(ops::call(reg.get("scatter.src_out"),
                         {zeros({2, 2}), 0, idx({1, 0}, {1, 2}), ones({1, 2}), bad}),
               TypeError);
}

TEST(IndexingMeta, ShapesWithoutData) {
  auto meta = [](IntList sizes, DType d = kFloat32) {
    return empty(sizes, TensorOptions().dtype(d).device(Device::meta()));
  };
  EXPECT_EQ(index_select(meta({5, 3}), 0, meta({4}, kInt64)).sizes(), IntList({4, 3}));
  EXPECT_EQ(gather(meta({5, 3}), 1, meta({5, 7}, kInt64)).sizes(), IntList({5, 7}));
  EXPECT_EQ(scatter_add(meta({5, 3}), 0, meta({2, 3}, kInt64), meta({2, 3})).sizes(),
            IntList({5, 3}));
  EXPECT_EQ(masked_fill(meta({5, 3}), meta({3}, kBool), Scalar(1.0)).sizes(), IntList({5, 3}));
  EXPECT_EQ(embedding(meta({10, 4}), meta({2, 3}, kInt64)).sizes(), IntList({2, 3, 4}));
  EXPECT_EQ(one_hot(meta({3}, kInt64), 5).sizes(), IntList({3, 5}));
}

}  // namespace
}  // namespace kiln
