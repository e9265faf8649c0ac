// Tensor's methods for linear algebra, shape and indexing give the values worked out by hand.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "test_util.h"

namespace kiln {
namespace {

using testing::all_close;

TEST(TensorMethodsLibrary, LinearAlgebra) {
  Tensor a = tensor({{1.0, 2.0}, {3.0, 4.0}});
  Tensor b = tensor({{5.0, 6.0}, {7.0, 8.0}});
  Tensor ab = tensor({{19.0, 22.0}, {43.0, 50.0}});
  EXPECT_TRUE(all_close(a.matmul(b), ab));
  EXPECT_TRUE(all_close(a.mm(b), ab));
  EXPECT_TRUE(all_close(a.unsqueeze(0).bmm(b.unsqueeze(0)), ab.unsqueeze(0)));
  Tensor v = tensor({1.0, 2.0});
  EXPECT_EQ(v.dot(tensor({3.0, 4.0})).item<double>(), 11.0);
  EXPECT_TRUE(all_close(v.outer(tensor({3.0, 4.0})), tensor({{3.0, 4.0}, {6.0, 8.0}})));
  // addmm: beta * self + alpha * (a @ b) = 2 * 1 + 0.5 * ab.
  Tensor c = ones({2, 2});
  EXPECT_TRUE(all_close(c.addmm(a, b, 2, 0.5), tensor({{11.5, 13.0}, {23.5, 27.0}})));
  c.addmm_(a, b, 0, 1);
  EXPECT_TRUE(all_close(c, ab));
  Tensor d = zeros({1, 2, 2});
  d.baddbmm_(a.unsqueeze(0), b.unsqueeze(0), 1, 2);
  EXPECT_TRUE(all_close(d, (ab * 2).unsqueeze(0)));
  EXPECT_TRUE(all_close(d.baddbmm(a.unsqueeze(0), b.unsqueeze(0), 0, 1), ab.unsqueeze(0)));
}

TEST(TensorMethodsLibrary, Shape) {
  Tensor x = tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(x.flip({1}).tolist<int64_t>(), (std::vector<int64_t>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(x.roll({1}, {1}).tolist<int64_t>(), (std::vector<int64_t>{3, 1, 2, 6, 4, 5}));
  EXPECT_EQ(x.repeat({1, 2}).sizes(), (IntList{2, 6}));
  EXPECT_EQ(x.tile({2}).sizes(), (IntList{2, 6}));
  EXPECT_EQ(x.tril().tolist<int64_t>(), (std::vector<int64_t>{1, 0, 0, 4, 5, 0}));
  EXPECT_EQ(x.triu(1).tolist<int64_t>(), (std::vector<int64_t>{0, 2, 3, 0, 0, 6}));
  Tensor y = x.clone();
  y.tril_(-1);
  EXPECT_EQ(y.tolist<int64_t>(), (std::vector<int64_t>{0, 0, 0, 4, 0, 0}));
  y = x.clone();
  y.triu_();
  EXPECT_EQ(y.tolist<int64_t>(), (std::vector<int64_t>{1, 2, 3, 0, 5, 6}));
}

TEST(TensorMethodsLibrary, Indexing) {
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor idx = tensor({int64_t{2}, int64_t{0}});
  EXPECT_TRUE(all_close(x.index_select(1, idx), tensor({{3.0, 1.0}, {6.0, 4.0}})));
  Tensor g = tensor({{int64_t{1}}, {int64_t{2}}});
  EXPECT_TRUE(all_close(x.gather(1, g), tensor({{2.0}, {6.0}})));
  Tensor z = zeros({2, 3});
  EXPECT_TRUE(all_close(z.scatter(1, g, tensor({{7.0}, {8.0}})),
                        tensor({{0.0, 7.0, 0.0}, {0.0, 0.0, 8.0}})));
  EXPECT_TRUE(all_close(z.scatter(1, g, 9.0), tensor({{0.0, 9.0, 0.0}, {0.0, 0.0, 9.0}})));
  EXPECT_TRUE(all_close(z.scatter_add(1, tensor({{int64_t{1}, int64_t{1}}}), tensor({{1.0, 2.0}})),
                        tensor({{0.0, 3.0, 0.0}, {0.0, 0.0, 0.0}})));
  Tensor w = z.clone();
  w.scatter_(1, g, tensor({{7.0}, {8.0}}));
  w.scatter_(0, tensor({{int64_t{1}}}), 5.0);
  w.scatter_add_(1, g, tensor({{1.0}, {1.0}}));
  EXPECT_TRUE(all_close(w, tensor({{0.0, 8.0, 0.0}, {5.0, 0.0, 9.0}})));
  Tensor mask = tensor({{true, false, true}, {false, false, true}});
  EXPECT_TRUE(all_close(x.masked_fill(mask, -1.0), tensor({{-1.0, 2.0, -1.0}, {4.0, 5.0, -1.0}})));
  x.masked_fill_(mask, 0.0);
  EXPECT_TRUE(all_close(x, tensor({{0.0, 2.0, 0.0}, {4.0, 5.0, 0.0}})));
}

}  // namespace
}  // namespace kiln
