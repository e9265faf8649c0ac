// cumsum/cumprod, sort, topk, argmax/argmin and unique on CUDA against the same ops on the CPU,
// with the same inputs: every dtype the CPU takes, every dim (negative too), non-contiguous
// inputs, long rows (100k), rows of one element, many rows, ties, NaNs and -0.0, empty and 0-dim
// tensors. Sorts, topk, the arg-reductions and unique must give the CPU's results exactly (stable
// order; topk runs the CPU's selection steps, so its tie order and unsorted order too). Float
// scans are compared with a tolerance: the GPU adds in another order (in double, as the CPU).
#include "cuda/cuda_test_util.h"

#include <cmath>

namespace kiln {
namespace {

using namespace cuda_test;
using ops::IValue;

const std::vector<DType> kAllDtypes = {
    DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
    DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

std::string sizes_str(IntList s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// Equal dtype, shape and elements (NaNs equal each other; integers compared as integers).
::testing::AssertionResult exactly(const Tensor& on_gpu, const Tensor& reference) {
  const Tensor got = cpu(on_gpu);
  if (got.dtype() != reference.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(got.dtype()) << " vs " << dtype_name(reference.dtype());
  }
  if (is_floating_point(reference.dtype())) return all_close(got, reference, 0.0, 0.0);
  if (IntList(got.sizes()) != IntList(reference.sizes())) {
    return ::testing::AssertionFailure()
           << "shape " << sizes_str(got.sizes()) << " vs " << sizes_str(reference.sizes());
  }
  if (got.numel() == 0 || got.eq(reference).all().item<bool>()) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "values differ: " << got << " vs " << reference;
}

// Values of `dtype` with many ties: floats rounded to halves (so -0.0 appears) with about one
// element in nine a NaN; integers in [-20, 20) (unsigned [0, 40)), bools.
Tensor tied(IntList sizes, DType dtype, uint64_t seed) {
  Tensor x = sample(sizes, dtype, seed);
  if (!is_floating_point(dtype)) return x;
  x = (x.to(DType::Float32) * 2).round() / 2;
  manual_seed(seed + 1000);
  return x.masked_fill(randn(sizes) > 1.2, std::nan("")).to(dtype);
}

// Inputs every op sees: shapes with every kind of row, and a non-contiguous one.
struct Input {
  Tensor x;
  std::string what;
};
std::vector<Input> inputs(DType dtype, uint64_t seed) {
  return {
      {tied({5, 9, 13}, dtype, seed), "3-D"},
      {tied({13, 9, 5}, dtype, seed + 1).transpose(0, 2), "transposed"},
      {tied({6, 40}, dtype, seed + 2).slice(1, 1, std::nullopt, 3), "strided"},
      {tied({3000, 1}, dtype, seed + 3), "rows of one element"},
      {tied({1000, 3}, dtype, seed + 4), "many short rows"},
      {tied({}, dtype, seed + 5), "0-dim"},
      {tied({0, 4}, dtype, seed + 6), "empty"},
  };
}

// The dims of x, in both spellings (0-dim: 0 and -1).
std::vector<int64_t> every_dim(const Tensor& x) {
  std::vector<int64_t> dims;
  const int64_t n = std::max<int64_t>(x.dim(), 1);
  for (int64_t d = 0; d < n; ++d) {
    dims.push_back(d);
    dims.push_back(d - n);
  }
  return dims;
}

// ---- cumsum / cumprod

::testing::AssertionResult close_scan(const Tensor& on_gpu, const Tensor& reference) {
  if (!is_floating_point(reference.dtype())) return exactly(on_gpu, reference);
  const bool half = reference.dtype() == DType::Float16 || reference.dtype() == DType::BFloat16;
  const Tensor got = cpu(on_gpu);
  if (got.dtype() != reference.dtype()) return ::testing::AssertionFailure() << "dtype differs";
  return half ? all_close(got, reference, 1e-2, 1e-2) : all_close(got, reference, 1e-6, 1e-6);
}

// cumprod inputs near 1, so that long products neither vanish nor overflow.
Tensor for_cumprod(const Tensor& x) {
  if (!is_floating_point(x.dtype())) return x;
  return (x.to(DType::Float64) * 0.01 + 1).to(x.dtype());
}

TEST(CudaScanSort, CumsumAndCumprodMatchTheCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAllDtypes) {
    for (const Input& in : inputs(dtype, 1)) {
      const Tensor g = gpu(in.x), p = for_cumprod(in.x), gp = gpu(p);
      for (int64_t dim : every_dim(in.x)) {
        SCOPED_TRACE(fmt::format("{} {} {} dim {}", dtype_name(dtype), in.what,
                                 sizes_str(in.x.sizes()), dim));
        EXPECT_TRUE(close_scan(g.cumsum(dim), in.x.cumsum(dim)));
        EXPECT_TRUE(close_scan(gp.cumprod(dim), p.cumprod(dim)));
      }
    }
  }
}

TEST(CudaScanSort, ScansOfLongRowsAndDtypeArgument) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::Int32}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = sample({3, 100000}, dtype, 2);
    EXPECT_TRUE(close_scan(gpu(x).cumsum(1), x.cumsum(1)));
    EXPECT_TRUE(close_scan(gpu(x).cumsum(0), x.cumsum(0)));
    const Tensor p = for_cumprod(x);
    EXPECT_TRUE(close_scan(gpu(p).cumprod(-1), p.cumprod(-1)));
  }
  // Integer products wrap around int64 the same way (multiplication modulo 2^64 in any order).
  const Tensor big = sample({2, 5000}, DType::Int64, 3);
  EXPECT_TRUE(exactly(gpu(big).cumprod(1), big.cumprod(1)));
  // dtype=: the input converted first, 16-bit results through float32.
  const Tensor i = sample({4, 300}, DType::Int32, 4), h = sample({4, 300}, DType::Float16, 5);
  EXPECT_TRUE(close_scan(gpu(i).cumsum(1, DType::Float32), i.cumsum(1, DType::Float32)));
  EXPECT_TRUE(close_scan(gpu(i).cumsum(1, DType::Int16), i.cumsum(1, DType::Int16)));
  EXPECT_TRUE(close_scan(gpu(h).cumsum(0, DType::Float64), h.cumsum(0, DType::Float64)));
  EXPECT_TRUE(close_scan(gpu(h).cumprod(1, DType::BFloat16), h.cumprod(1, DType::BFloat16)));
}

TEST(CudaScanSort, ScanInPlaceAndOutVariants) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = sample({6, 50}, DType::Float32, 6);
  Tensor in_place = gpu(x);
  call("cumsum_", {in_place, int64_t{1}, IValue()});
  EXPECT_TRUE(close_scan(in_place, x.cumsum(1)));
  // out= of another dtype and a non-contiguous layout.
  Tensor out = gpu(zeros({50, 6}, DType::Float64)).t();
  ops::call(ops::OpRegistry::instance().get("cumprod.out"), {gpu(x), int64_t{0}, IValue(), out});
  EXPECT_TRUE(all_close(cpu(out), x.cumprod(0).to(DType::Float64), 1e-6, 1e-6));
}

// ---- sort

TEST(CudaScanSort, StableSortMatchesTheCpuExactly) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAllDtypes) {
    for (const Input& in : inputs(dtype, 10)) {
      const Tensor g = gpu(in.x);
      for (int64_t dim : every_dim(in.x)) {
        for (bool descending : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} {} dim {} descending {}", dtype_name(dtype), in.what,
                                   sizes_str(in.x.sizes()), dim, descending));
          auto [values, indices] = sort(g, dim, descending, true);
          auto [want_values, want_indices] = sort(in.x, dim, descending, true);
          EXPECT_TRUE(exactly(values, want_values));
          EXPECT_TRUE(exactly(indices, want_indices));
        }
      }
    }
  }
}

TEST(CudaScanSort, SortLongRowsAndArgsort) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Float32, DType::Float16, DType::Int64, DType::UInt8, DType::Bool}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor one_row = tied({100000}, dtype, 11);  // the single-sequence radix sort
    const Tensor rows = tied({3, 100000}, dtype, 12);  // long rows of the segmented sort
    for (const Tensor& x : {one_row, rows}) {
      for (bool descending : {false, true}) {
        auto [v, i] = sort(gpu(x), -1, descending, true);
        auto [wv, wi] = sort(x, -1, descending, true);
        EXPECT_TRUE(exactly(v, wv));
        EXPECT_TRUE(exactly(i, wi));
        EXPECT_TRUE(exactly(argsort(gpu(x), 0, descending, true), argsort(x, 0, descending, true)));
      }
    }
  }
  // -0.0 and 0.0 are ties, kept in input order; the values keep their signs.
  const Tensor zeros_signed = from_vector<float>({0.0f, -0.0f, 1.0f, -0.0f, 0.0f}, {5});
  auto [v, i] = sort(gpu(zeros_signed), 0, false, true);
  EXPECT_TRUE(exactly(i, from_vector<int64_t>({0, 1, 3, 4, 2}, {5})));
  EXPECT_TRUE(std::signbit(cpu(v)[1].item<float>()));
}

TEST(CudaScanSort, SortOutVariantWritesTheCallersTensors) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = tied({7, 20}, DType::Float32, 13);
  Tensor values = gpu(empty({20, 7}, DType::Float64)).t();  // another dtype and layout
  Tensor indices = gpu(empty({0}, DType::Int64));
  ops::call(ops::OpRegistry::instance().get("sort.stable_out"),
            {gpu(x), true, int64_t{1}, true, values, indices});
  auto [wv, wi] = sort(x, 1, true, true);
  EXPECT_TRUE(exactly(values, wv.to(DType::Float64)));
  EXPECT_TRUE(exactly(indices, wi));
}

// ---- topk

TEST(CudaScanSort, TopkMatchesTheCpuExactly) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAllDtypes) {
    if (dtype == DType::Bool) continue;  // topk rejects bool
    for (const Input& in : inputs(dtype, 20)) {
      const Tensor g = gpu(in.x);
      for (int64_t dim : every_dim(in.x)) {
        const int64_t n = in.x.dim() == 0 ? 1 : in.x.size(dim);
        for (int64_t k : {std::min<int64_t>(1, n), n / 2, n}) {
          for (bool largest : {true, false}) {
            for (bool sorted : {true, false}) {
              SCOPED_TRACE(fmt::format("{} {} {} dim {} k {} largest {} sorted {}",
                                       dtype_name(dtype), in.what, sizes_str(in.x.sizes()), dim, k,
                                       largest, sorted));
              auto [values, indices] = topk(g, k, dim, largest, sorted);
              auto [want_values, want_indices] = topk(in.x, k, dim, largest, sorted);
              EXPECT_TRUE(exactly(values, want_values));
              EXPECT_TRUE(exactly(indices, want_indices));
            }
          }
        }
      }
    }
  }
}

TEST(CudaScanSort, TopkBothSelectionPathsOnLongRows) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // k * 64 <= n: the heap selection; larger k: nth_element, then a sort of the first k - 1.
  for (DType dtype : {DType::Float32, DType::BFloat16, DType::Int32}) {
    const Tensor x = tied({2, 100000}, dtype, 21);
    const Tensor g = gpu(x);
    for (int64_t k : {int64_t{5}, int64_t{1562}, int64_t{1563}, int64_t{40000}}) {
      for (bool largest : {true, false}) {
        for (bool sorted : {true, false}) {
          SCOPED_TRACE(
              fmt::format("{} k {} largest {} sorted {}", dtype_name(dtype), k, largest, sorted));
          auto [values, indices] = topk(g, k, 1, largest, sorted);
          auto [want_values, want_indices] = topk(x, k, 1, largest, sorted);
          EXPECT_TRUE(exactly(values, want_values));
          EXPECT_TRUE(exactly(indices, want_indices));
        }
      }
    }
  }
  // Many equal elements: which of them come out, and in what order, is the CPU's.
  const Tensor flat = zeros({1000});
  auto [v, i] = topk(gpu(flat), 20, 0, true, true);
  EXPECT_TRUE(exactly(i, std::get<1>(topk(flat, 20, 0, true, true))));
}

// ---- argmax / argmin

TEST(CudaScanSort, ArgmaxArgminMatchTheCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAllDtypes) {
    if (dtype == DType::Bool) continue;  // argmax/argmin reject bool
    for (const Input& in : inputs(dtype, 30)) {
      const Tensor g = gpu(in.x);
      std::vector<std::optional<int64_t>> dims = {std::nullopt};
      for (int64_t d : every_dim(in.x)) dims.emplace_back(d);
      for (const std::optional<int64_t>& dim : dims) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} {} dim {} keepdim {}", dtype_name(dtype), in.what,
                                   sizes_str(in.x.sizes()), dim ? std::to_string(*dim) : "None",
                                   keepdim));
          const bool reduces_empty =
              in.x.numel() == 0 && (!dim || in.x.size(*dim) == 0);  // the meta raises
          if (reduces_empty) {
            EXPECT_THROW(argmax(g, dim, keepdim), Error);
            continue;
          }
          EXPECT_TRUE(exactly(argmax(g, dim, keepdim), argmax(in.x, dim, keepdim)));
          EXPECT_TRUE(exactly(argmin(g, dim, keepdim), argmin(in.x, dim, keepdim)));
        }
      }
    }
  }
}

TEST(CudaScanSort, ArgmaxFirstIndexOnLongRows) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // One row split over many blocks, and a few long rows: the first extreme and the first NaN.
  for (DType dtype : {DType::Float32, DType::Float16, DType::Float64, DType::Int64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = tied({3, 100000}, dtype, 31);
    EXPECT_TRUE(exactly(argmax(gpu(x)), argmax(x)));
    EXPECT_TRUE(exactly(argmin(gpu(x), -1), argmin(x, -1)));
    EXPECT_TRUE(exactly(argmax(gpu(x), 1, true), argmax(x, 1, true)));
    EXPECT_TRUE(exactly(argmax(gpu(x.t()), 0), argmax(x.t(), 0)));
  }
  // Equal maxima far apart, without NaNs: the first one.
  Tensor ties = zeros({300000});
  ties.narrow(0, 123456, 1).fill_(5.0);
  ties.narrow(0, 200000, 1).fill_(5.0);
  ties.narrow(0, 250000, 1).fill_(5.0);
  EXPECT_EQ(cpu(argmax(gpu(ties))).item<int64_t>(), 123456);
  EXPECT_EQ(cpu(argmin(gpu(ties))).item<int64_t>(), 0);
}

// ---- unique

TEST(CudaScanSort, UniqueMatchesTheCpuExactly) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAllDtypes) {
    for (const Input& in : inputs(dtype, 40)) {
      const Tensor g = gpu(in.x);
      for (bool return_inverse : {false, true}) {
        for (bool return_counts : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} {} inverse {} counts {}", dtype_name(dtype), in.what,
                                   sizes_str(in.x.sizes()), return_inverse, return_counts));
          auto [values, inverse, counts] = unique(g, true, return_inverse, return_counts);
          auto [want_values, want_inverse, want_counts] =
              unique(in.x, true, return_inverse, return_counts);
          EXPECT_TRUE(exactly(values, want_values));
          EXPECT_TRUE(exactly(inverse, want_inverse));
          EXPECT_TRUE(exactly(counts, want_counts));
        }
      }
    }
  }
  // A long input; NaNs are all distinct; -0.0 and 0.0 are one value (the first one's sign).
  const Tensor x = tied({100000}, DType::Float32, 41);
  auto [v, i, c] = unique(gpu(x), true, true, true);
  auto [wv, wi, wc] = unique(x, true, true, true);
  EXPECT_TRUE(exactly(v, wv));
  EXPECT_TRUE(exactly(i, wi));
  EXPECT_TRUE(exactly(c, wc));
  const Tensor zeros_signed = from_vector<float>({-0.0f, 0.0f, NAN, NAN, 1.0f}, {5});
  auto [zv, zi, zc] = unique(gpu(zeros_signed), true, true, true);
  EXPECT_TRUE(exactly(zc, from_vector<int64_t>({2, 1, 1, 1}, {4})));
  EXPECT_TRUE(std::signbit(cpu(zv)[0].item<float>()));
}

TEST(CudaScanSort, UniqueDimMatchesTheCpuExactly) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAllDtypes) {
    // Few distinct values, so that whole slices repeat; NaN slices are all distinct.
    const Tensor small = sample({6, 3, 4}, dtype, 50);
    const Tensor x = is_floating_point(dtype) ? tied({6, 3, 4}, dtype, 50)
                                              : (dtype == DType::Bool ? small : small.remainder(2));
    for (const Tensor& t : {x, x.transpose(0, 2)}) {
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        SCOPED_TRACE(fmt::format("{} {} dim {}", dtype_name(dtype), sizes_str(t.sizes()), dim));
        auto [values, inverse, counts] = unique(gpu(t), true, true, true, dim);
        auto [want_values, want_inverse, want_counts] = unique(t, true, true, true, dim);
        EXPECT_TRUE(exactly(values, want_values));
        EXPECT_TRUE(exactly(inverse, want_inverse));
        EXPECT_TRUE(exactly(counts, want_counts));
      }
    }
  }
  // Many rows, one element wide and wide.
  for (const Tensor& t : {sample({20000, 1}, DType::Int64, 51).remainder(50),
                          sample({3000, 700}, DType::Int8, 52).remainder(2),
                          sample({2, 100000}, DType::Float32, 53)}) {
    SCOPED_TRACE(sizes_str(t.sizes()));
    auto [values, inverse, counts] = unique(gpu(t), true, true, true, 0);
    auto [want_values, want_inverse, want_counts] = unique(t, true, true, true, 0);
    EXPECT_TRUE(exactly(values, want_values));
    EXPECT_TRUE(exactly(inverse, want_inverse));
    EXPECT_TRUE(exactly(counts, want_counts));
  }
  // Empty: the selected dim may be empty, another may not; a 0-dim tensor has no dim.
  auto [ev, ei, ec] = unique(gpu(zeros({0, 3})), true, true, true, 0);
  EXPECT_EQ(IntList(ev.sizes()), IntList({0, 3}));
  EXPECT_TRUE(ev.device().is_cuda() && ei.device().is_cuda() && ec.device().is_cuda());
  EXPECT_TRUE(throws_error(
      [] {
        unique(gpu(zeros({0, 3})), true, true, true, 1);
      },
      {"unique_dim", "0 sized dimensions"}));
  EXPECT_TRUE(throws_error([] { unique(gpu(scalar_tensor(1.0)), true, true, true, 0); },
                           {"unique_dim", "no dimensions"}));
}

}  // namespace
}  // namespace kiln
