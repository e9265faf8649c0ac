// The indexing ops on CUDA (gather, scatter, scatter_reduce, index, index_put, flip, cat,
// searchsorted, nonzero) against the same ops on the CPU with the same inputs: several dtypes,
// non-contiguous inputs, broadcast index tensors, negative indices, masks, empty tensors.
// Results that only move elements are compared exactly. Atomic accumulation (scatter_reduce,
// index_put with accumulate) adds duplicates in another order than the CPU's serial loop: small
// integer values keep those sums exact in every dtype, and float sums of many values are compared
// within a tolerance. An out-of-range index raises the CPU's IndexError, and the device keeps
// working afterwards.
#include "cuda/cuda_test_util.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

#define REQUIRE_GPU() \
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

// The GPU result against the CPU's: on the device, with the same dtype, exactly equal (or within
// rtol for floats when rtol is given).
::testing::AssertionResult matches(const Tensor& on_gpu, const Tensor& reference,
                                   double rtol = 0.0) {
  if (!on_gpu.is_cuda()) return ::testing::AssertionFailure() << "the result is not on the GPU";
  const Tensor back = cpu(on_gpu);
  if (rtol == 0.0 || !is_floating_point(reference.dtype())) return same_values(back, reference);
  if (back.dtype() != reference.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(back.dtype()) << " vs " << dtype_name(reference.dtype());
  }
  return all_close(back, reference, rtol, rtol);
}

Tensor longs(const std::vector<int64_t>& values, IntList shape) {
  return from_vector(values, shape);
}
Tensor mask(const std::vector<int64_t>& values, IntList shape) {
  return from_vector(values, shape).to(DType::Bool);
}
// Indices in [0, high).
Tensor indices(IntList sizes, int64_t high, uint64_t seed) {
  manual_seed(seed);
  return randint(0, high, sizes, TensorOptions(DType::Int64));
}
// Small integers (in [-3, 3]) of dtype: sums and products of a few stay exact in every dtype.
Tensor small_values(IntList sizes, DType dtype, uint64_t seed) {
  manual_seed(seed);
  return randint(-3, 4, sizes, TensorOptions(DType::Int64)).to(dtype);
}
// [k, m] indices into n rows, distinct within each column (a scatter without duplicates).
Tensor distinct_rows(int64_t n, int64_t k, int64_t m, uint64_t seed) {
  return sample({n, m}, DType::Float32, seed).argsort(0).slice(0, 0, k).contiguous();
}
std::vector<Tensor> on_gpu(const std::vector<Tensor>& list) {
  std::vector<Tensor> out;
  for (const Tensor& t : list) out.push_back(t.defined() ? gpu(t) : t);
  return out;
}
Tensor call_op(const char* name, ops::Stack args) {
  return ops::call1(ops::OpRegistry::instance().get(name), std::move(args));
}

constexpr DType kMoved[] = {DType::Float32, DType::Float64,  DType::Int64, DType::Int32,
                            DType::Int8,    DType::BFloat16, DType::Bool};

TEST(CudaIndexing, GatherMatchesCpu) {
  REQUIRE_GPU();
  for (DType dtype : kMoved) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor x = sample({5, 7}, dtype, 1);
    const Tensor g = gpu(x);
    const Tensor rows = indices({9, 7}, 5, 2), columns = indices({4, 3}, 7, 3);
    EXPECT_TRUE(matches(gather(g, 0, gpu(rows)), gather(x, 0, rows)));
    EXPECT_TRUE(matches(gather(g, -1, gpu(columns)), gather(x, -1, columns)));
    // Transposed self, index sliced every other column.
    const Tensor wide = indices({7, 8}, 5, 4);
    EXPECT_TRUE(matches(gather(g.t(), 1, gpu(wide).slice(1, 0, 8, 2)),
                        gather(x.t(), 1, wide.slice(1, 0, 8, 2))));
    // 0-dim, and an empty index.
    const Tensor scalar = sample({}, dtype, 5);
    EXPECT_TRUE(
        matches(gather(gpu(scalar), 0, gpu(longs({0}, {}))), gather(scalar, 0, longs({0}, {}))));
    const Tensor none = longs({}, {5, 0});
    EXPECT_TRUE(matches(gather(g, 1, gpu(none)), gather(x, 1, none)));
  }
  // A 3-D gather along the middle dim with a smaller index.
  const Tensor x = sample({4, 6, 5}, DType::Float32, 6);
  const Tensor index = indices({3, 9, 2}, 6, 7);
  EXPECT_TRUE(matches(gather(gpu(x), 1, gpu(index)), gather(x, 1, index)));
}

TEST(CudaIndexing, ScatterMatchesCpu) {
  REQUIRE_GPU();
  for (DType dtype : kMoved) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor self = sample({6, 5}, dtype, 10);
    const Tensor src = sample({4, 6}, dtype, 11);  // larger than the index in dim 1
    const Tensor index = distinct_rows(6, 3, 5, 12);
    EXPECT_TRUE(matches(scatter(gpu(self), 0, gpu(index), gpu(src)), scatter(self, 0, index, src)));
    // Along dim 1 with a transposed (non-contiguous) index and a transposed self.
    const Tensor along1 = distinct_rows(6, 4, 5, 13).t();  // [5, 4] into 6 columns
    const Tensor wide = sample({6, 5}, dtype, 14).t();     // [5, 6]
    EXPECT_TRUE(matches(scatter(gpu(sample({6, 5}, dtype, 14)).t(), 1, gpu(along1), gpu(src.t())),
                        scatter(wide, 1, along1, src.t())));
    // In place into a non-contiguous view.
    Tensor on_device = gpu(sample({5, 6}, dtype, 15)).t();
    Tensor on_host = sample({5, 6}, dtype, 15).t();
    on_device.scatter_(0, gpu(index), gpu(src));
    on_host.scatter_(0, index, src);
    EXPECT_TRUE(matches(on_device, on_host));
  }
  const Tensor scalar = sample({}, DType::Float32, 16), value = sample({}, DType::Float32, 17);
  EXPECT_TRUE(matches(scatter(gpu(scalar), 0, gpu(longs({0}, {})), gpu(value)),
                      scatter(scalar, 0, longs({0}, {}), value)));
  const Tensor self = sample({3, 2}, DType::Float32, 18), src = sample({1, 2}, DType::Float32, 19);
  EXPECT_TRUE(matches(scatter(gpu(self), 0, gpu(longs({}, {0, 2})), gpu(src)),
                      scatter(self, 0, longs({}, {0, 2}), src)));
}

TEST(CudaIndexing, ScatterReduceMatchesCpu) {
  REQUIRE_GPU();
  const char* reductions[] = {"sum", "prod", "mean", "amax", "amin"};
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Int8,
                      DType::Int16, DType::UInt8, DType::BFloat16, DType::Float16, DType::Bool}) {
    const Tensor self = small_values({4, 5}, dtype, 20);
    const Tensor index = indices({6, 5}, 4, 21);  // one or two values per position
    const Tensor src = small_values({10, 6}, dtype, 22);
    for (const char* reduce : reductions) {
      for (bool include_self : {true, false}) {
        SCOPED_TRACE(fmt::format("{} {} include_self={}", dtype_name(dtype), reduce, include_self));
        EXPECT_TRUE(
            matches(scatter_reduce(gpu(self), 0, gpu(index), gpu(src), reduce, include_self),
                    scatter_reduce(self, 0, index, src, reduce, include_self), rtol_for(dtype)));
        // Along dim 1, self transposed.
        const Tensor t = small_values({4, 5}, dtype, 23).t();
        EXPECT_TRUE(matches(scatter_reduce(gpu(small_values({4, 5}, dtype, 23)).t(), 1,
                                           gpu(index.t()), gpu(src.t()), reduce, include_self),
                            scatter_reduce(t, 1, index.t(), src.t(), reduce, include_self),
                            rtol_for(dtype)));
      }
    }
  }
  // Integer means round toward -inf.
  const Tensor self = sample({6}, DType::Int64, 24), src = sample({9}, DType::Int64, 25);
  const Tensor index = indices({9}, 6, 26);
  EXPECT_TRUE(matches(scatter_reduce(gpu(self), 0, gpu(index), gpu(src), "mean"),
                      scatter_reduce(self, 0, index, src, "mean")));
  // A NaN wins amax and amin.
  const Tensor with_nan = from_vector<double>({NAN, 1.0, -1.0}, {3}).to(DType::Float32);
  for (const char* reduce : {"amax", "amin"}) {
    const Tensor base = sample({4}, DType::Float32, 27);
    EXPECT_TRUE(
        matches(scatter_reduce(gpu(base), 0, gpu(longs({1, 1, 2}, {3})), gpu(with_nan), reduce),
                scatter_reduce(base, 0, longs({1, 1, 2}, {3}), with_nan, reduce)));
  }
}

// Many values into few positions: contention on every address.
TEST(CudaIndexing, ScatterReduceManyDuplicates) {
  REQUIRE_GPU();
  const Tensor index = indices({200000}, 7, 30);
  const Tensor f = sample({200000}, DType::Float32, 31), base = zeros({7});
  EXPECT_TRUE(matches(scatter_reduce(gpu(base), 0, gpu(index), gpu(f), "sum"),
                      scatter_reduce(base, 0, index, f, "sum"), 1e-3));
  EXPECT_TRUE(matches(scatter_reduce(gpu(base), 0, gpu(index), gpu(f), "mean", false),
                      scatter_reduce(base, 0, index, f, "mean", false), 1e-3));
  EXPECT_TRUE(matches(scatter_reduce(gpu(base), 0, gpu(index), gpu(f), "amax", false),
                      scatter_reduce(base, 0, index, f, "amax", false)));
  const Tensor i = sample({200000}, DType::Int64, 32), ibase = zeros({7}, DType::Int64);
  EXPECT_TRUE(matches(scatter_reduce(gpu(ibase), 0, gpu(index), gpu(i), "sum"),
                      scatter_reduce(ibase, 0, index, i, "sum")));
  const Tensor b = small_values({200000}, DType::Int8, 33), bbase = zeros({7}, DType::Int8);
  EXPECT_TRUE(matches(scatter_reduce(gpu(bbase), 0, gpu(index), gpu(b), "sum"),
                      scatter_reduce(bbase, 0, index, b, "sum")));  // wraps alike in any order
}

TEST(CudaIndexing, IndexMatchesCpu) {
  REQUIRE_GPU();
  const Tensor none;
  const std::vector<std::vector<Tensor>> cases{
      {longs({4, 0, -1, 2}, {4})},
      {none, longs({1, 0, 3, 5}, {2, 2}).to(DType::Int32)},
      {longs({2, 0}, {2, 1}), none, longs({1, 6, -7}, {3})},  // separated: index dims first
      {none, longs({0, 2}, {2}), longs({3, 1}, {2})},         // adjacent in the middle
      {longs({0, 3, 1}, {3, 1}), longs({5, -6}, {2})},        // broadcast to [3, 2]
      {mask({1, 0, 1, 1, 0}, {5})},
      {mask({1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1,
             1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0},
            {5, 6})},
      {none, from_vector<int64_t>({1, 0, 1, 1, 0, 1}, {6}).to(DType::UInt8)},
      {longs({3, 1}, {2}), none, mask({0, 1, 0, 0, 0, 1, 0}, {7})},
      {longs({2}, {})},
      {longs({}, {0})},
      {none, none, none},
  };
  for (DType dtype : kMoved) {
    const Tensor x = sample({5, 6, 7}, dtype, 40);
    const Tensor g = gpu(x);
    for (size_t c = 0; c < cases.size(); ++c) {
      SCOPED_TRACE(fmt::format("{} case {}", dtype_name(dtype), c));
      const Tensor want = x.index(cases[c]);
      EXPECT_TRUE(matches(g.index(on_gpu(cases[c])), want));
      EXPECT_TRUE(matches(g.index(cases[c]), want));  // CPU indices, as PyTorch allows
    }
    // A permuted self.
    const std::vector<Tensor> list{longs({6, 0}, {2}), none, longs({-1, 2}, {2})};
    EXPECT_TRUE(
        matches(g.permute({2, 0, 1}).index(on_gpu(list)), x.permute({2, 0, 1}).index(list)));
  }
  const Tensor empty_self = sample({0, 3}, DType::Float32, 41);
  const std::vector<Tensor> list{none, longs({2, 0}, {2})};
  EXPECT_TRUE(matches(gpu(empty_self).index(on_gpu(list)), empty_self.index(list)));
  // Masked selection goes through nonzero on the device.
  const Tensor x = sample({40, 30}, DType::Float32, 42);
  const Tensor positive = x > 0;
  EXPECT_TRUE(matches(gpu(x).index({gpu(positive)}), x.index({positive})));
}

TEST(CudaIndexing, IndexPutMatchesCpu) {
  REQUIRE_GPU();
  const Tensor none;
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Int16,
                      DType::Int8, DType::UInt8, DType::BFloat16, DType::Float16, DType::Bool}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor self = small_values({5, 4}, dtype, 50);
    const Tensor g = gpu(self);
    // Distinct positions: assignment is deterministic.
    const std::vector<Tensor> rows{longs({4, 0, -2}, {3})};
    const Tensor values = small_values({3, 4}, dtype, 51);
    EXPECT_TRUE(matches(g.index_put(on_gpu(rows), gpu(values)), self.index_put(rows, values)));
    const std::vector<Tensor> points{longs({0, 3, 1}, {3}), longs({3, -4, 2}, {3})};
    const Tensor scalar = small_values({}, dtype, 52);  // stays on the CPU: a 0-dim operand
    EXPECT_TRUE(matches(g.index_put(on_gpu(points), scalar), self.index_put(points, scalar)));
    const std::vector<Tensor> masked{
        mask({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1}, {5, 4})};
    const Tensor one = small_values({1}, dtype, 53);
    EXPECT_TRUE(matches(g.index_put(on_gpu(masked), gpu(one)), self.index_put(masked, one)));
    const std::vector<Tensor> separated{longs({1, 3}, {2, 1}), none};
    const Tensor row = small_values({4}, dtype, 54);
    EXPECT_TRUE(matches(g.index_put(on_gpu(separated), gpu(row)), self.index_put(separated, row)));
    // accumulate with duplicates (small integers: exact sums in any order).
    const std::vector<Tensor> dup{longs({1, 3, 1, 1, -1, 4}, {6})};
    const Tensor add = small_values({6, 4}, dtype, 55);
    EXPECT_TRUE(matches(g.index_put(on_gpu(dup), gpu(add), true), self.index_put(dup, add, true)));
    const std::vector<Tensor> dup_points{longs({2, 2, 0, 2}, {4}), longs({1, 1, 3, -3}, {4})};
    EXPECT_TRUE(matches(g.index_put(dup_points, gpu(add.select(1, 0).slice(0, 0, 4)), true),
                        self.index_put(dup_points, add.select(1, 0).slice(0, 0, 4), true)));
    const std::vector<Tensor> column_mask{none, mask({1, 0, 0, 1}, {4})};
    const Tensor column = small_values({5, 1}, dtype, 56);
    EXPECT_TRUE(matches(g.index_put(on_gpu(column_mask), gpu(column), true),
                        self.index_put(column_mask, column, true)));
    // In place into a transposed view.
    Tensor on_device = gpu(small_values({4, 5}, dtype, 57)).t();
    Tensor on_host = small_values({4, 5}, dtype, 57).t();
    on_device.index_put_(on_gpu(dup), gpu(add), true);
    on_host.index_put_(dup, add, true);
    EXPECT_TRUE(matches(on_device, on_host));
  }
  // Many float values into few positions: equal to rounding.
  const Tensor base = zeros({7, 3});
  const std::vector<Tensor> many{indices({100000}, 7, 58)};
  const Tensor values = sample({100000, 3}, DType::Float32, 59);
  EXPECT_TRUE(matches(gpu(base).index_put(on_gpu(many), gpu(values), true),
                      base.index_put(many, values, true), 1e-3));
  // Empty index: nothing changes.
  const Tensor self = sample({4, 3}, DType::Float32, 60);
  const std::vector<Tensor> nothing{longs({}, {0})};
  const Tensor no_values = sample({3}, DType::Float32, 61);
  EXPECT_TRUE(matches(gpu(self).index_put(on_gpu(nothing), gpu(no_values)),
                      self.index_put(nothing, no_values)));
}

TEST(CudaIndexing, FlipMatchesCpu) {
  REQUIRE_GPU();
  const std::vector<std::vector<int64_t>> dim_lists{{0}, {1}, {2}, {0, 2}, {-1, 0, 1}, {}};
  for (DType dtype : kMoved) {
    const Tensor x = sample({3, 4, 5}, dtype, 70);
    const Tensor g = gpu(x);
    for (const std::vector<int64_t>& dims : dim_lists) {
      SCOPED_TRACE(fmt::format("{} dims [{}]", dtype_name(dtype), fmt::join(dims, ", ")));
      EXPECT_TRUE(matches(g.flip(dims), x.flip(dims)));
      EXPECT_TRUE(matches(g.permute({2, 0, 1}).flip(dims), x.permute({2, 0, 1}).flip(dims)));
      EXPECT_TRUE(matches(g.slice(2, 0, 5, 2).flip(dims), x.slice(2, 0, 5, 2).flip(dims)));
    }
  }
  const Tensor row = sample({1, 5}, DType::Float32, 71);
  EXPECT_TRUE(matches(gpu(row).expand({4, 5}).flip({0, 1}), row.expand({4, 5}).flip({0, 1})));
  const Tensor scalar = sample({}, DType::Float32, 72),
               nothing = sample({0, 3}, DType::Float32, 73);
  EXPECT_TRUE(matches(gpu(scalar).flip({}), scalar.flip({})));
  EXPECT_TRUE(matches(gpu(scalar).flip({0}), scalar.flip({0})));
  EXPECT_TRUE(matches(gpu(nothing).flip({1}), nothing.flip({1})));
}

TEST(CudaIndexing, CatMatchesCpu) {
  REQUIRE_GPU();
  for (DType dtype : kMoved) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor a = sample({2, 3}, dtype, 80), b = sample({4, 3}, dtype, 81);
    const Tensor c = sample({3, 2}, dtype, 82);
    EXPECT_TRUE(matches(cat({gpu(a), gpu(b)}, 0), cat({a, b}, 0)));
    EXPECT_TRUE(matches(cat({gpu(a), gpu(c).t(), gpu(a)}, -1), cat({a, c.t(), a}, -1)));
  }
  const Tensor i = sample({2, 2}, DType::Int32, 83), d = sample({2, 2}, DType::Float64, 84);
  const Tensor l = sample({2, 1}, DType::Int64, 85);
  EXPECT_TRUE(matches(cat({gpu(i), gpu(d), gpu(l)}, 1), cat({i, d, l}, 1)));  // promoted
  const Tensor x = sample({2, 3}, DType::Float32, 86), skipped = sample({0}, DType::Float32, 87);
  const Tensor empty_part = sample({0, 3}, DType::Float32, 88);
  EXPECT_TRUE(matches(cat({gpu(x), gpu(skipped), gpu(x)}, 0), cat({x, skipped, x}, 0)));
  EXPECT_TRUE(matches(cat({gpu(empty_part), gpu(x)}, 0), cat({empty_part, x}, 0)));
  const Tensor cube = sample({3, 4, 5}, DType::Float32, 89);
  EXPECT_TRUE(matches(cat({gpu(cube), gpu(cube).slice(1, 0, 4, 2)}, 1),
                      cat({cube, cube.slice(1, 0, 4, 2)}, 1)));
}

// Sorted along the last dim.
Tensor ascending(const Tensor& t) { return std::get<0>(sort(t)); }
Tensor sorted(IntList sizes, DType dtype, uint64_t seed) {
  return ascending(sample(sizes, dtype, seed));
}

TEST(CudaIndexing, SearchsortedMatchesCpu) {
  REQUIRE_GPU();
  for (DType dtype :
       {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::BFloat16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor seq = sorted({50}, dtype, 90), rows = sorted({3, 40}, dtype, 91);
    const Tensor values = sample({3, 17}, dtype, 92);
    for (bool right : {false, true}) {
      EXPECT_TRUE(matches(searchsorted(gpu(seq), gpu(values), false, right),
                          searchsorted(seq, values, false, right)));
      EXPECT_TRUE(matches(searchsorted(gpu(rows), gpu(values), true, right),
                          searchsorted(rows, values, true, right)));
    }
    EXPECT_TRUE(matches(searchsorted(gpu(seq), gpu(values).t(), false, false, "right"),
                        searchsorted(seq, values.t(), false, false, "right")));
    // Ties: the sequence holds every value twice.
    const Tensor ties = ascending(cat({seq, seq}));
    EXPECT_TRUE(matches(searchsorted(gpu(ties), gpu(seq)), searchsorted(ties, seq)));
    EXPECT_TRUE(matches(searchsorted(gpu(ties), gpu(seq), false, true),
                        searchsorted(ties, seq, false, true)));
  }
  // Promotion, a sorter, NaNs, 0-dim and empty values.
  const Tensor seq = sorted({30}, DType::Int64, 93), values = sample({5, 4}, DType::Float32, 94);
  EXPECT_TRUE(matches(searchsorted(gpu(seq), gpu(values)), searchsorted(seq, values)));
  const Tensor unsorted = sample({20}, DType::Float64, 95), sorter = unsorted.argsort();
  const Tensor probes = sample({9}, DType::Float64, 96);
  EXPECT_TRUE(
      matches(searchsorted(gpu(unsorted), gpu(probes), false, false, std::nullopt, gpu(sorter)),
              searchsorted(unsorted, probes, false, false, std::nullopt, sorter)));
  const Tensor with_nan = from_vector<double>({1.0, 2.0, NAN}, {3});
  const Tensor nan_probes = from_vector<double>({2.0, NAN, 5.0}, {3});
  for (bool right : {false, true}) {
    EXPECT_TRUE(matches(searchsorted(gpu(with_nan), gpu(nan_probes), false, right),
                        searchsorted(with_nan, nan_probes, false, right)));
  }
  const Tensor scalar = sample({}, DType::Float64, 97),
               nothing = sample({0, 2}, DType::Float64, 98);
  EXPECT_TRUE(matches(searchsorted(gpu(ascending(unsorted)), gpu(scalar)),
                      searchsorted(ascending(unsorted), scalar)));
  EXPECT_TRUE(matches(searchsorted(gpu(ascending(unsorted)), gpu(nothing)),
                      searchsorted(ascending(unsorted), nothing)));
  // Many values.
  const Tensor long_seq = sorted({10000}, DType::Float32, 99);
  const Tensor many = sample({100000}, DType::Float32, 100);
  EXPECT_TRUE(matches(searchsorted(gpu(long_seq), gpu(many)), searchsorted(long_seq, many)));
}

TEST(CudaIndexing, NonzeroMatchesCpu) {
  REQUIRE_GPU();
  auto check = [](const Tensor& x) { EXPECT_TRUE(matches(gpu(x).nonzero(), x.nonzero())); };
  manual_seed(110);
  check(randint(-1, 2, {3, 4}, TensorOptions(DType::Int64)));
  check(sample({2, 3, 2}, DType::Bool, 111));
  check(sample({7}, DType::Float64, 112).round().to(DType::BFloat16));
  check(sample({}, DType::Float32, 113));
  check(zeros({}, DType::Int32));
  check(zeros({0, 3}));
  check(zeros({4, 5}, DType::UInt8));
  check(from_vector<double>({0.0, -0.0, NAN, 1.0, 0.0, INFINITY}, {2, 3}).to(DType::Float32));
  // Non-contiguous: transposed and sliced.
  const Tensor grid = sample({6, 9}, DType::Float32, 114).round();
  EXPECT_TRUE(matches(gpu(grid).t().nonzero(), grid.t().nonzero()));
  EXPECT_TRUE(matches(gpu(grid).slice(1, 1, 9, 3).nonzero(), grid.slice(1, 1, 9, 3).nonzero()));
  // Many chunks, and more dims than the elementwise kernels index (contiguous: they merge).
  check(sample({1000, 1001}, DType::Float32, 115) > 0.5);
  check(sample({2, 1, 3, 1, 2, 2, 1, 3, 2, 2}, DType::Bool, 116));
}

TEST(CudaIndexing, OutAndInPlaceVariants) {
  REQUIRE_GPU();
  const Tensor x = sample({5, 7}, DType::Float32, 120);
  const Tensor index = indices({5, 4}, 7, 121);
  // A transposed out of another dtype: written through a temporary.
  Tensor out = gpu(zeros({4, 5}, DType::Float64)).t();
  call_op("gather.out", {gpu(x), 1, gpu(index), false, out});
  EXPECT_TRUE(matches(out, gather(x, 1, index).to(DType::Float64)));
  Tensor flipped = gpu(zeros({7, 5})).t();
  call_op("flip.out", {gpu(x), std::vector<int64_t>{0, 1}, flipped});
  EXPECT_TRUE(matches(flipped, x.flip({0, 1})));
  Tensor joined = gpu(zeros({10, 7}, DType::Float64));
  call_op("cat.out", {std::vector<Tensor>{gpu(x), gpu(x)}, 0, joined});
  EXPECT_TRUE(matches(joined, cat({x, x}, 0).to(DType::Float64)));
  // scatter_reduce_ on a non-contiguous self (through a contiguous temporary).
  Tensor on_device = gpu(x).t();
  Tensor on_host = x.t().clone();
  const Tensor rows = indices({9, 5}, 7, 122);
  const Tensor src = small_values({9, 5}, DType::Float32, 123);
  on_device.scatter_reduce_(0, gpu(rows), gpu(src), "amax", false);
  on_host.scatter_reduce_(0, rows, src, "amax", false);
  EXPECT_TRUE(matches(on_device, on_host));
}

TEST(CudaIndexing, OutOfRangeIndicesRaiseAndTheDeviceKeepsWorking) {
  REQUIRE_GPU();
  const Tensor x = sample({5, 3}, DType::Float32, 130);
  const Tensor g = gpu(x);
  auto device_still_works = [&] {
    EXPECT_TRUE(matches(g.flip({0}) * 2, x.flip({0}) * 2));
    kiln::cuda::synchronize();
  };
  const Tensor bad = gpu(longs({0, 7, 1}, {3, 1}));
  EXPECT_TRUE(throws_error([&] { gather(g, 0, bad); }, {"gather", "index 7", "size 5"}));
  EXPECT_THROW(gather(g, 0, bad), IndexError);
  device_still_works();
  EXPECT_TRUE(throws_error(
      [&] {
        gather(g, 1, gpu(longs({-1}, {1, 1})));
      },
      {"gather", "index -1", "dimension 1", "size 3"}));
  device_still_works();
  const Tensor src = gpu(sample({3, 1}, DType::Float32, 131));
  EXPECT_TRUE(throws_error([&] { scatter(g, 0, bad, src); }, {"scatter", "index 7", "size 5"}));
  device_still_works();
  EXPECT_TRUE(throws_error([&] { scatter_reduce(g, 0, bad, src, "mean", false); },
                           {"scatter_reduce", "index 7", "size 5"}));
  device_still_works();
  EXPECT_TRUE(throws_error(
      [&] {
        g.index({gpu(longs({4, -6}, {2}))});
      },
      {"index", "index -6", "dimension 0", "size 5"}));
  device_still_works();
  EXPECT_TRUE(throws_error(
      [&] {
        g.index({Tensor(), longs({3}, {1})});
      },
      {"index", "index 3", "dimension 1", "size 3"}));
  device_still_works();
  // index_put_ raises before writing anything.
  Tensor target = gpu(x);
  EXPECT_TRUE(throws_error(
      [&] {
        target.index_put_({gpu(longs({1, 9}, {2}))}, gpu(full({}, 1.0f)), true);
      },
      {"index_put", "index 9", "size 5"}));
  EXPECT_TRUE(matches(target, x));
  device_still_works();
  const Tensor seq = gpu(from_vector<double>({3.0, 1.0, 2.0}, {3}));
  EXPECT_TRUE(throws_error(
      [&] {
        searchsorted(seq, gpu(from_vector<double>({1.5}, {1})), false, false, std::nullopt,
                     gpu(longs({1, 5, 0}, {3})));
      },
      {"searchsorted", "sorter index 5", "size 3"}));
  device_still_works();
}

}  // namespace
}  // namespace kiln
