// sort, argsort, topk, unique, searchsorted: std::stable_sort / std::lower_bound on vectors in
// the test as references, hand-computed cases, NaN ordering, any dim, layouts, dtypes, 0-dim and
// empty inputs, out= forms, and every kind of bad input.
#include "test_view_util.h"

#include <kiln/ops/sorting.h>

#include <algorithm>
#include <numeric>

namespace kiln {
namespace {

using testing::all_close;
using testing::iota;
using testing::throws_error;
using testing::values;
using V = std::vector<double>;

// Reference: per row of a (rows, n) row-major vector, stable order by value (NaN last
// ascending, first descending), as (values, indices).
std::pair<V, V> ref_sort_rows(const V& data, int64_t n, bool desc) {
  V vals, idx;
  for (size_t r = 0; r * static_cast<size_t>(n) < data.size(); ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    auto at = [&](int64_t i) { return data[r * static_cast<size_t>(n) + static_cast<size_t>(i)]; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double x = at(a), y = at(b);
      if (desc) return std::isnan(x) ? !std::isnan(y) : x > y;
      return std::isnan(y) ? !std::isnan(x) : x < y;
    });
    for (int64_t i : order) {
      vals.push_back(at(i));
      idx.push_back(static_cast<double>(i));
    }
  }
  return {vals, idx};
}

Tensor random_values(IntList sizes, DType dtype, int64_t range, uint64_t seed) {
  // Small integer range: many ties, so stability shows.
  std::vector<double> v;
  uint64_t s = seed * 2654435761u + 1;
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back(static_cast<double>(static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(range)) -
                                    range / 2));
  }
  return from_vector<double>(v, sizes).to(dtype);
}

TEST(Sort, LastDimStableAgainstStdStableSort) {
  for (DType dtype : {kFloat32, kFloat64, kInt64, kInt32, kInt16, kUInt8}) {
    // uint8 from non-negative values (converting a negative float to uint8 is undefined).
    Tensor x = dtype == kUInt8 ? random_values({5, 37}, kFloat64, 7, 1).abs().to(kUInt8)
                               : random_values({5, 37}, dtype, 7, 1);
    for (bool desc : {false, true}) {
      auto [v, i] = sort(x, -1, desc, true);
      auto [rv, ri] = ref_sort_rows(values(x), 37, desc);
      EXPECT_EQ(v.dtype(), dtype);
      EXPECT_EQ(i.dtype(), kInt64);
      EXPECT_EQ(values(v), rv) << dtype_name(dtype) << desc;
      EXPECT_EQ(values(i), ri) << dtype_name(dtype) << desc;
      EXPECT_EQ(values(argsort(x, -1, desc, true)), ri);
    }
  }
}

TEST(Sort, OtherDimsAndLayouts) {
  Tensor x = random_values({4, 6, 5}, kFloat64, 9, 2);
  for (int64_t dim : {0, 1, 2}) {
    auto [v, i] = sort(x, dim, false, true);
    // Reference: move dim last, sort rows, move back.
    Tensor moved = x.movedim(dim, -1).contiguous();
    auto [rv, ri] = ref_sort_rows(values(moved), x.size(dim), false);
    EXPECT_EQ(values(v.movedim(dim, -1).contiguous()), rv) << dim;
    EXPECT_EQ(values(i.movedim(dim, -1).contiguous()), ri) << dim;
  }
  // Transposed and strided inputs give the same results as contiguous copies.
  Tensor t = random_values({7, 4}, kFloat32, 100, 3).t();
  EXPECT_EQ(values(std::get<1>(sort(t, 1, true, true))),
            values(std::get<1>(sort(t.contiguous(), 1, true, true))));
  Tensor s = random_values({3, 20}, kInt64, 5, 4).slice(1, 0, 20, 3);
  EXPECT_EQ(values(std::get<0>(sort(s))), values(std::get<0>(sort(s.contiguous()))));
  // The Tensor methods forward.
  auto [mv, mi] = x.sort(1, true, true);
  EXPECT_EQ(values(mv), values(std::get<0>(sort(x, 1, true, true))));
  EXPECT_EQ(values(x.argsort(0)), values(std::get<1>(sort(x, 0))));
}

TEST(Sort, NaNOrderingAndSpecials) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = from_vector<double>({2.0, nan, -inf, 5.0, nan, inf, -1.0}, {7});
  auto [up, ui] = sort(x);
  EXPECT_TRUE(all_close(up, from_vector<double>({-inf, -1.0, 2.0, 5.0, inf, nan, nan}, {7})));
  EXPECT_EQ(values(ui), (V{2, 6, 0, 3, 5, 1, 4}));
  auto [down, di] = sort(x.to(kFloat32), 0, true, true);
  EXPECT_TRUE(all_close(down, from_vector<double>({nan, nan, inf, 5.0, 2.0, -1.0, -inf}, {7})));
  EXPECT_EQ(values(di), (V{1, 4, 5, 3, 0, 6, 2}));
  // Half and bfloat16 compare as float.
  Tensor h = from_vector<double>({0.5, nan, -2.0, 1.0}, {4}).to(kFloat16);
  EXPECT_EQ(values(std::get<1>(sort(h))), (V{2, 0, 3, 1}));
  EXPECT_EQ(values(std::get<1>(sort(h.to(kBFloat16), 0, true))), (V{1, 3, 0, 2}));
  // Bool: false before true, stable.
  Tensor b = tensor({true, false, true, false});
  EXPECT_EQ(values(std::get<1>(sort(b))), (V{1, 3, 0, 2}));
}

TEST(Sort, ZeroDimEmptyAndLarge) {
  auto [v, i] = sort(scalar_tensor(3.5));
  EXPECT_EQ(v.dim(), 0);
  EXPECT_EQ(v.item<double>(), 3.5);
  EXPECT_EQ(i.item<int64_t>(), 0);
  EXPECT_EQ(std::get<0>(sort(empty({0, 4}), 1)).sizes(), IntList({0, 4}));
  EXPECT_EQ(std::get<1>(sort(empty({3, 0}), 1)).sizes(), IntList({3, 0}));
  // Many rows: the parallel split gives the same as the reference.
  Tensor big = random_values({300, 257}, kFloat32, 1000, 5);
  auto [bv, bi] = sort(big, 1, false, true);
  auto [rv, ri] = ref_sort_rows(values(big), 257, false);
  EXPECT_EQ(values(bv), rv);
  EXPECT_EQ(values(bi), ri);
}

TEST(Sort, OutVariantsAndErrors) {
  Tensor x = tensor({3.0f, 1.0f, 2.0f});
  Tensor vals = empty({0});
  Tensor idx = empty({0}, kInt64);
  ops::call(ops::OpRegistry::instance().get("sort.out"), {x, 0, false, vals, idx});
  EXPECT_EQ(values(vals), (V{1, 2, 3}));
  EXPECT_EQ(values(idx), (V{1, 2, 0}));
  Tensor ai = empty({0}, kInt64);
  ops::call(ops::OpRegistry::instance().get("argsort.stable_out"), {x, true, 0, true, ai});
  EXPECT_EQ(values(ai), (V{0, 2, 1}));
  EXPECT_THROW(sort(iota({2, 3}), 2), IndexError);
  EXPECT_TRUE(throws_error([] { sort(scalar_tensor(1.0), 1); }, {"sort", "[-1, 0]", "1"}));
}

TEST(TopK, AgainstSortedReference) {
  for (DType dtype : {kFloat32, kFloat64, kInt64, kInt32}) {
    // Distinct values (a permutation), so indices are determined.
    std::vector<double> perm(300);
    std::iota(perm.begin(), perm.end(), -150.0);
    std::reverse(perm.begin() + 50, perm.begin() + 200);
    std::rotate(perm.begin(), perm.begin() + 77, perm.end());
    Tensor x = from_vector<double>(perm, {3, 100}).to(dtype);
    for (int64_t k : {1, 2, 5, 60, 100}) {
      for (bool largest : {true, false}) {
        auto [v, i] = topk(x, k, 1, largest);
        auto [rv, ri] = ref_sort_rows(values(x), 100, largest);
        V ev, ei;
        for (int64_t r = 0; r < 3; ++r) {
          for (int64_t j = 0; j < k; ++j) {
            ev.push_back(rv[static_cast<size_t>(r * 100 + j)]);
            ei.push_back(ri[static_cast<size_t>(r * 100 + j)]);
          }
        }
        EXPECT_EQ(v.sizes(), IntList({3, k}));
        EXPECT_EQ(values(v), ev) << dtype_name(dtype) << k << largest;
        EXPECT_EQ(values(i), ei) << dtype_name(dtype) << k << largest;
      }
    }
  }
}

TEST(TopK, UnsortedDimsNaNAndEdges) {
  Tensor x = tensor({5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 0.0, 6.0, 4.0});
  // Unsorted: the same set of values, in some order.
  auto [v, i] = topk(x, 4, 0, true, false);
  V got = values(v);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (V{6, 7, 8, 9}));
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(values(x)[static_cast<size_t>(values(i)[static_cast<size_t>(j)])],
              values(v)[static_cast<size_t>(j)]);
  }
  // Dim 0 of a 2-D tensor, and a transposed input.
  Tensor m = tensor({{1.0, 8.0}, {4.0, 2.0}, {3.0, 5.0}});
  auto [mv, mi] = topk(m, 2, 0);
  EXPECT_EQ(values(mv), (V{4, 8, 3, 5}));
  EXPECT_EQ(values(mi), (V{1, 0, 2, 2}));
  EXPECT_EQ(values(std::get<0>(m.t().topk(1))), (V{4, 8}));
  // NaN is the largest.
  const double nan = std::nan("");
  Tensor n = from_vector<double>({1.0, nan, 3.0, 2.0}, {4});
  EXPECT_TRUE(all_close(std::get<0>(topk(n, 2)), from_vector<double>({nan, 3.0}, {2})));
  EXPECT_EQ(values(std::get<1>(topk(n, 2, 0, false))), (V{0, 3}));
  // 0-dim, k = 0, empty rows.
  auto [sv, si] = topk(scalar_tensor(2.0), 1);
  EXPECT_EQ(sv.dim(), 0);
  EXPECT_EQ(sv.item<double>(), 2.0);
  EXPECT_EQ(si.item<int64_t>(), 0);
  // k = 0 of a 0-dim tensor still gives its one element (PyTorch 2.11: values 2, index 0).
  auto [zv, zi] = topk(scalar_tensor(2.0), 0);
  EXPECT_EQ(zv.item<double>(), 2.0);
  EXPECT_EQ(zi.item<int64_t>(), 0);
  EXPECT_EQ(std::get<0>(topk(x, 0)).sizes(), IntList({0}));
  EXPECT_EQ(std::get<0>(topk(empty({0, 5}), 3)).sizes(), IntList({0, 3}));
  // Half.
  EXPECT_EQ(values(std::get<0>(topk(x.to(kFloat16), 2))), (V{9, 8}));
  // out=.
  Tensor ov = empty({0}, kFloat64), oi = empty({0}, kInt64);
  ops::call(ops::OpRegistry::instance().get("topk.out"), {x, SymInt(2), 0, false, true, ov, oi});
  EXPECT_EQ(values(ov), (V{0, 1}));
  EXPECT_EQ(values(oi), (V{7, 1}));
}

TEST(TopK, Errors) {
  EXPECT_TRUE(throws_error([] { topk(iota({2, 3}), 4); }, {"topk", "k (4)", "3"}));
  EXPECT_TRUE(throws_error([] { topk(iota({2, 3}), -1); }, {"topk", "k (-1)"}));
  EXPECT_TRUE(throws_error([] { topk(scalar_tensor(1.0), 2); }, {"topk", "k (2)"}));
  EXPECT_THROW(topk(tensor({true, false}), 1), TypeError);
  EXPECT_THROW(topk(iota({2, 3}), 1, 2), IndexError);
}

TEST(Unique, FlatValuesInverseCounts) {
  Tensor x = tensor({{3, 1, 2}, {1, 5, 3}});
  auto [u, inv, cnt] = unique(x, true, true, true);
  EXPECT_EQ(values(u), (V{1, 2, 3, 5}));
  EXPECT_EQ(u.dtype(), kInt64);
  EXPECT_EQ(inv.sizes(), IntList({2, 3}));
  EXPECT_EQ(values(inv), (V{2, 0, 1, 0, 3, 2}));
  EXPECT_EQ(values(cnt), (V{2, 1, 2, 1}));
  // Without inverse / counts: empty tensors in their place, as aten's _unique2.
  auto [u2, inv2, cnt2] = unique(x.t());
  EXPECT_EQ(values(u2), (V{1, 2, 3, 5}));
  EXPECT_EQ(inv2.sizes(), IntList({0}));
  EXPECT_EQ(cnt2.sizes(), IntList({0}));
  // Against a std::sort / std::unique reference on floats with many repeats.
  Tensor r = random_values({500}, kFloat32, 40, 9);
  V ref = values(r);
  std::sort(ref.begin(), ref.end());
  ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
  auto [ru, rinv, rcnt] = unique(r, true, true, true);
  EXPECT_EQ(values(ru), ref);
  // inverse maps back, counts add up.
  V rv = values(r), uv = values(ru), iv = values(rinv);
  for (size_t i = 0; i < rv.size(); ++i) EXPECT_EQ(uv[static_cast<size_t>(iv[i])], rv[i]);
  V cv = values(rcnt);
  EXPECT_EQ(std::accumulate(cv.begin(), cv.end(), 0.0), 500.0);
}

TEST(Unique, DtypesNaNZeroDimEmpty) {
  auto [b, bi, bc] = unique(tensor({true, false, true}), true, true, true);
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(values(b), (V{0, 1}));
  EXPECT_EQ(values(bi), (V{1, 0, 1}));
  EXPECT_EQ(values(bc), (V{1, 2}));
  // Each NaN is its own value (NaN != NaN), sorted last.
  const double nan = std::nan("");
  auto [n, ni, nc] = unique(from_vector<double>({nan, 1.0, nan, 0.0}, {4}), true, false, true);
  EXPECT_TRUE(all_close(n, from_vector<double>({0.0, 1.0, nan, nan}, {4})));
  EXPECT_EQ(values(nc), (V{1, 1, 1, 1}));
  auto [z, zi, zc] = unique(scalar_tensor(3.0), true, true, true);
  EXPECT_EQ(z.sizes(), IntList({1}));
  EXPECT_EQ(zi.dim(), 0);
  EXPECT_EQ(zi.item<int64_t>(), 0);
  EXPECT_EQ(values(zc), (V{1}));
  auto [e, ei, ec] = unique(empty({0, 3}), true, true, true);
  EXPECT_EQ(e.sizes(), IntList({0}));
  EXPECT_EQ(ei.sizes(), IntList({0, 3}));
  EXPECT_EQ(ec.sizes(), IntList({0}));
}

TEST(Unique, AlongDim) {
  Tensor x = tensor({{3, 1}, {2, 1}, {3, 1}});
  auto [u, inv, cnt] = unique(x, true, true, true, 0);
  EXPECT_EQ(u.sizes(), IntList({2, 2}));
  EXPECT_EQ(values(u), (V{2, 1, 3, 1}));
  EXPECT_EQ(values(inv), (V{1, 0, 1}));
  EXPECT_EQ(values(cnt), (V{1, 2}));
  // Columns: [3,2,3] and [1,1,1] sort as [1,1,1] < [3,2,3].
  auto [c, cinv, ccnt] = unique(x, true, false, false, -1);
  EXPECT_EQ(values(c), (V{1, 3, 1, 2, 1, 3}));
  EXPECT_EQ(values(cinv), (V{1, 0}));
  EXPECT_EQ(values(ccnt), (V{1, 1}));
  // A middle dim of a 3-D tensor: slices [:, j, :].
  Tensor y = tensor({{{1, 2}, {0, 0}, {1, 2}}, {{3, 4}, {0, 0}, {3, 4}}});
  auto [m, minv, mcnt] = unique(y, true, true, true, 1);
  EXPECT_EQ(m.sizes(), IntList({2, 2, 2}));
  EXPECT_EQ(values(m), (V{0, 0, 1, 2, 0, 0, 3, 4}));
  EXPECT_EQ(values(minv), (V{1, 0, 1}));
  EXPECT_EQ(values(mcnt), (V{1, 2}));
  // Empty along the selected dim is fine; empty elsewhere is not.
  EXPECT_EQ(std::get<0>(unique(empty({0, 3}), true, true, true, 0)).sizes(), IntList({0, 3}));
  EXPECT_TRUE(throws_error(
      [] {
        unique(empty({0, 3}), true, false, false, 1);
      },
      {"unique_dim", "0 sized dimensions"}));
  EXPECT_THROW(unique(scalar_tensor(1.0), true, false, false, 0), IndexError);
}

TEST(Unique, RefusesMeta) {
  Tensor m = testing::to_meta(iota({3}));
  EXPECT_TRUE(throws_error([&] { unique(m); }, {"unique", "meta device"}));
}

// Reference: std::lower_bound / std::upper_bound on a vector.
V ref_search(const V& seq, const V& vals, bool right) {
  V out;
  for (double v : vals) {
    auto it = right ? std::upper_bound(seq.begin(), seq.end(), v)
                    : std::lower_bound(seq.begin(), seq.end(), v);
    out.push_back(static_cast<double>(it - seq.begin()));
  }
  return out;
}

TEST(SearchSorted, AgainstStdBounds) {
  V seq{-3, -1, -1, 0, 2, 2, 2, 5, 8};
  V vals{-4, -3, -1, 0, 1, 2, 3, 8, 9, -1.5};
  for (DType dtype : {kFloat32, kFloat64, kInt64, kInt32}) {
    Tensor s = from_vector<double>(seq, {9}).to(dtype);
    Tensor v = from_vector<double>(vals, {2, 5}).to(kFloat64);
    for (bool right : {false, true}) {
      Tensor got = searchsorted(s, v, false, right);
      EXPECT_EQ(got.dtype(), kInt64);
      EXPECT_EQ(got.sizes(), IntList({2, 5}));
      EXPECT_EQ(values(got), ref_search(seq, vals, right)) << dtype_name(dtype) << right;
    }
  }
  // side= and out_int32.
  Tensor s = from_vector<double>(seq, {9});
  Tensor r = searchsorted(s, tensor({2.0}), true, false, std::string("right"));
  EXPECT_EQ(r.dtype(), kInt32);
  EXPECT_EQ(values(r), (V{7}));
  // Int sequence, fractional value: compared in the promoted dtype (3.5 stays 3.5: after the
  // 3, where a value truncated to 3 would land before it).
  EXPECT_EQ(searchsorted(tensor({1, 3, 5}), Scalar(3.5)).item<int64_t>(), 2);
  EXPECT_EQ(searchsorted(tensor({1.0, 3.0, 5.0}), tensor({2, 3})).tolist<int64_t>(),
            (std::vector<int64_t>{1, 1}));
  // Scalar and 0-dim values give 0-dim results.
  Tensor sc = searchsorted(s, Scalar(2), false, true);
  EXPECT_EQ(sc.dim(), 0);
  EXPECT_EQ(sc.item<int64_t>(), 7);
  EXPECT_EQ(searchsorted(s, scalar_tensor(0.5)).dim(), 0);
}

TEST(SearchSorted, PerRowSorterNaNLayouts) {
  // Each row of values searches its own row of the sequence.
  Tensor seq = tensor({{0, 2, 4, 6}, {1, 1, 3, 9}});
  Tensor vals = tensor({{3, 6, -1}, {1, 10, 2}});
  EXPECT_EQ(values(searchsorted(seq, vals)), (V{2, 3, 0, 0, 4, 2}));
  EXPECT_EQ(values(searchsorted(seq, vals, false, true)), (V{2, 4, 0, 2, 4, 2}));
  // A sorter permutes an unsorted sequence into order.
  Tensor unsorted = tensor({3.0, -1.0, 2.0, 0.0, 5.0});
  Tensor sorter = tensor({1, 3, 2, 0, 4});
  EXPECT_EQ(values(searchsorted(unsorted, tensor({-2.0, 0.5, 2.0, 7.0}), false, false, std::nullopt,
                                sorter)),
            (V{0, 2, 2, 5}));
  // NaN: every comparison with NaN is false, so the search moves right past a NaN in the
  // sequence (5 lands after it) and a NaN value goes past everything (PyTorch's results).
  const double nan = std::nan("");
  Tensor with_nan = from_vector<double>({1.0, 2.0, nan}, {3});
  EXPECT_EQ(values(searchsorted(with_nan, from_vector<double>({2.0, nan, 5.0}, {3}))),
            (V{1, 3, 3}));
  EXPECT_EQ(values(searchsorted(with_nan, from_vector<double>({2.0, nan, 5.0}, {3}), false, true)),
            (V{3, 3, 3}));
  // Non-contiguous values and sequence.
  Tensor big = iota({2, 10}).slice(1, 0, 10, 2);      // rows 0 2 4 6 8 / 10 12 14 16 18
  Tensor q = tensor({{5.0, 11.0}, {3.0, 17.0}}).t();  // rows (5, 3) and (11, 17)
  EXPECT_EQ(values(searchsorted(big, q)), (V{3, 2, 1, 4}));
  // Empty values, out=.
  EXPECT_EQ(searchsorted(big, empty({2, 0})).sizes(), IntList({2, 0}));
  Tensor out = empty({0}, kInt64);
  ops::call(ops::OpRegistry::instance().get("searchsorted.Tensor_out"),
            {tensor({1.0, 2.0}), tensor({1.5}), false, false, std::nullopt, std::nullopt, out});
  EXPECT_EQ(values(out), (V{1}));
}

TEST(SearchSorted, Errors) {
  Tensor seq2d = tensor({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}});
  EXPECT_TRUE(throws_error([&] { searchsorted(seq2d, tensor({2.5})); },
                           {"first N-1 dimensions", "[2, 3]", "[1]"}));
  EXPECT_TRUE(throws_error([&] { searchsorted(seq2d, Scalar(2.5)); },
                           {"scalar only when boundaries tensor dimension is 1", "dim(2)"}));
  EXPECT_TRUE(throws_error([] { searchsorted(scalar_tensor(1.0), tensor({1.0})); },
                           {"positive dimension"}));
  EXPECT_TRUE(throws_error(
      [] {
        searchsorted(tensor({3.0, 1.0, 2.0}), tensor({2.0}), false, false, std::nullopt,
                     tensor({1, 2}));
      },
      {"same size", "[3]", "[2]"}));
  EXPECT_THROW(searchsorted(tensor({3.0, 1.0, 2.0}), tensor({2.0}), false, false, std::nullopt,
                            tensor({1, 2, 0}).to(kInt32)),
               TypeError);
  EXPECT_THROW(searchsorted(tensor({3.0, 1.0, 2.0}), tensor({2.0}), false, false, std::nullopt,
                            tensor({1, 7, 0})),
               IndexError);
  EXPECT_TRUE(throws_error(
      [] { searchsorted(tensor({1.0}), tensor({2.0}), false, true, std::string("left")); },
      {"side and right can't be set to opposites"}));
  EXPECT_TRUE(throws_error(
      [] { searchsorted(tensor({1.0}), tensor({2.0}), false, false, std::string("up")); },
      {"side can only be 'left' or 'right'", "up"}));
}

}  // namespace
}  // namespace kiln
