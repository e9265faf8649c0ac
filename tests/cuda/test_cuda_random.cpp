// Random ops on CUDA against the CPU's: after the same manual_seed, every draw on the GPU gives the
// CPU's numbers (each device's generator starts from the seed; kernels/random.h). Uniforms,
// integers, permutations, Bernoulli draws and dropout masks are compared bit for bit. Normals go
// through log/sin/cos, whose last bits differ between CUDA and glibc: float64 normals within 16
// ulps (in practice 0 to 2), narrower ones within 1 ulp of the output type and identical but for
// at most one element in 10^5 (a double within a few ulps of a rounding boundary: about 1 in
// 10^8).
#include "cuda/cuda_test_util.h"

#include <kiln/ops/dropout.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

namespace kiln {
namespace {

using namespace cuda_test;
using testing::throws_error;

constexpr DType kFloats[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
constexpr int64_t kSizes[] = {1, 7, 1000003};  // 1000003 elements: not a whole number of blocks

const Device kGpu = Device::cuda();
const Device kHost = Device::cpu();

TensorOptions on(Device device, DType dtype) { return TensorOptions(dtype).device(device); }

// draw(device) after manual_seed(seed), on the CPU and on the GPU: {CPU result, GPU result copied
// to the CPU}.
template <typename Draw>
std::pair<Tensor, Tensor> on_both(uint64_t seed, const Draw& draw) {
  manual_seed(seed);
  const Tensor c = draw(kHost);
  manual_seed(seed);
  const Tensor g = draw(kGpu);
  EXPECT_TRUE(g.is_cuda());
  return {c, cpu(g)};
}

// Same dtype, sizes and values, bit for bit (integers compared as int64, not through double).
::testing::AssertionResult identical(const Tensor& gpu_result, const Tensor& reference) {
  const Tensor a = cpu(gpu_result);
  if (a.dtype() != reference.dtype() || a.sizes().vec() != reference.sizes().vec()) {
    return ::testing::AssertionFailure()
           << dtype_name(a.dtype()) << " [" << fmt::format("{}", fmt::join(a.sizes(), ", "))
           << "] vs " << dtype_name(reference.dtype()) << " ["
           << fmt::format("{}", fmt::join(reference.sizes(), ", ")) << "]";
  }
  if (is_floating_point(reference.dtype())) return same_values(a, reference);
  const auto va = a.to(DType::Int64).tolist<int64_t>();
  const auto vb = reference.to(DType::Int64).tolist<int64_t>();
  for (size_t i = 0; i < va.size(); ++i) {
    if (va[i] != vb[i]) {
      return ::testing::AssertionFailure() << "element " << i << ": " << va[i] << " vs " << vb[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// One unit in the last place of dtype at magnitude m (subnormals: the smallest step).
double ulp(double m, DType dtype) {
  int digits = 24, min_exponent = -126;
  if (dtype == DType::Float64) digits = 53, min_exponent = -1022;
  if (dtype == DType::Float16) digits = 11, min_exponent = -14;
  if (dtype == DType::BFloat16) digits = 8;
  int e = 0;
  std::frexp(m, &e);  // m = f * 2^e, f in [0.5, 1): the binade's exponent is e - 1
  return std::ldexp(1.0, std::max(e - 1, min_exponent) - (digits - 1));
}

// GPU normals against the CPU's, within the bound the header states. `scale` (|mean| + 8 |std| of
// an affine draw) widens the bound for values near 0 where mean + std * z cancels: they inherit
// z's difference times std.
::testing::AssertionResult normals_match(const Tensor& gpu_result, const Tensor& reference,
                                         double scale = 0.0) {
  const Tensor back = cpu(gpu_result);
  const DType dtype = reference.dtype();
  if (back.dtype() != dtype || back.sizes().vec() != reference.sizes().vec()) {
    return ::testing::AssertionFailure() << "dtype or shape differs";
  }
  const bool wide = dtype == DType::Float64;
  const double ulps = wide ? 16 : 1;
  const auto a = back.tolist<double>(), b = reference.tolist<double>();
  size_t differing = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    ++differing;
    const double m = std::max({std::abs(a[i]), std::abs(b[i]), scale});
    if (!(std::abs(a[i] - b[i]) <= ulps * ulp(m, dtype))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs " << b[i] << " (" << ulps << " ulp of "
             << dtype_name(dtype) << ")";
    }
  }
  if (!wide && differing > a.size() / 100000 + 1) {
    return ::testing::AssertionFailure()
           << differing << " of " << a.size() << " elements differ (within 1 ulp)";
  }
  return ::testing::AssertionSuccess();
}

TEST(CudaRandom, RandMatchesCpuEveryDtypeAndSize) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kFloats) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("{} n={}", dtype_name(dtype), n));
      auto [c, g] = on_both(101, [&](Device d) { return rand({n}, on(d, dtype)); });
      EXPECT_TRUE(identical(g, c));
    }
    auto [c, g] = on_both(102, [&](Device d) { return rand({3, 5, 7}, on(d, dtype)); });
    EXPECT_TRUE(identical(g, c)) << dtype_name(dtype);
  }
}

TEST(CudaRandom, RandnMatchesCpuEveryDtypeAndSize) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kFloats) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("{} n={}", dtype_name(dtype), n));
      auto [c, g] = on_both(103, [&](Device d) { return randn({n}, on(d, dtype)); });
      EXPECT_TRUE(normals_match(g, c));
    }
  }
}

TEST(CudaRandom, RandintMatchesCpuEveryDtypeAndRange) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    DType dtype;
    int64_t low, high;
  };
  // One word per element up to a range of 2^32, two above (2^40 and the whole int64 range).
  for (const Case& k : std::vector<Case>{{DType::UInt8, 0, 200},
                                         {DType::Int8, -100, 100},
                                         {DType::Int16, -1000, 30000},
                                         {DType::Int32, -2147483648LL, 2147483647LL},
                                         {DType::Int64, -5, 5},
                                         {DType::Int64, 0, int64_t{1} << 40},
                                         {DType::Int64, kMin, kMax},
                                         {DType::Float16, -2048, 2049},
                                         {DType::BFloat16, -256, 257},
                                         {DType::Float32, -1000, 1000},
                                         {DType::Float64, -(int64_t{1} << 53), int64_t{1} << 53}}) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("{} [{}, {}) n={}", dtype_name(k.dtype), k.low, k.high, n));
      auto [c, g] =
          on_both(104, [&](Device d) { return randint(k.low, k.high, {n}, on(d, k.dtype)); });
      EXPECT_TRUE(identical(g, c));
    }
  }
  auto [c, g] = on_both(105, [](Device d) { return randint(10, {4, 9}, on(d, DType::Int64)); });
  EXPECT_TRUE(identical(g, c));  // the high-only overload
}

TEST(CudaRandom, RandintStaysInBounds) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  manual_seed(106);
  const auto v = randint(-3, 4, {100000}, on(kGpu, DType::Int64)).to(kHost).tolist<int64_t>();
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), -3);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 3);
  const auto u = randint(250, 256, {100000}, on(kGpu, DType::UInt8)).to(kHost);
  const auto uv = u.to(DType::Int64).tolist<int64_t>();
  EXPECT_EQ(*std::min_element(uv.begin(), uv.end()), 250);
  EXPECT_EQ(*std::max_element(uv.begin(), uv.end()), 255);
}

TEST(CudaRandom, RandpermMatchesCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Int64, DType::Int32, DType::Float32}) {
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{1000}, int64_t{100003}}) {
      SCOPED_TRACE(fmt::format("{} n={}", dtype_name(dtype), n));
      auto [c, g] = on_both(107, [&](Device d) { return randperm(n, on(d, dtype)); });
      EXPECT_TRUE(identical(g, c));
    }
  }
  EXPECT_EQ(randperm(0, on(kGpu, DType::Int64)).numel(), 0);
}

TEST(CudaRandom, NormalOverloadsMatchCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kFloats) {
    SCOPED_TRACE(dtype_name(dtype));
    auto [c, g] = on_both(108, [&](Device d) { return normal(0.5, 2.0, {1001}, on(d, dtype)); });
    EXPECT_TRUE(normals_match(g, c, 0.5 + 8 * 2.0));
    const Tensor mean = sample({7, 1}, dtype, 1), std = sample({9}, dtype, 2).abs();
    auto [c2, g2] = on_both(109, [&](Device d) {
      const Tensor m = mean.to(d), s = std.to(d);
      return normal(m, s);
    });
    EXPECT_TRUE(normals_match(g2, c2, 8 + 8 * 8));  // |mean|, std: samples below 8
    auto [c3, g3] = on_both(110, [&](Device d) {
      return call("normal.Tensor_float", {mean.to(d), 3.0});
    });
    EXPECT_TRUE(normals_match(g3, c3, 8 + 8 * 3));
    auto [c4, g4] = on_both(111, [&](Device d) {
      return call("normal.float_Tensor", {-1.0, std.to(d)});
    });
    EXPECT_TRUE(normals_match(g4, c4, 1 + 8 * 8));
  }
}

TEST(CudaRandom, InPlaceAndLikeDrawsFollowRowMajorOrder) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dtype));
    // A strided self (every other column) and a transposed one: drawn in row-major order.
    auto [c, g] = on_both(112, [&](Device d) {
      Tensor self = zeros({5, 8}, on(d, dtype)).slice(1, 0, 8, 2);
      uniform_(self, -2.0, 3.0);
      return self.contiguous();
    });
    EXPECT_TRUE(identical(g, c));
    auto [c2, g2] = on_both(113, [&](Device d) {
      Tensor self = zeros({6, 4}, on(d, dtype)).t();
      normal_(self, 1.0, 2.0);
      return self.contiguous();
    });
    EXPECT_TRUE(normals_match(g2, c2, 1.0 + 8 * 2.0));
    const Tensor layout = empty_strided({3, 4}, {1, 3}, on(kHost, dtype));
    auto [c3, g3] = on_both(114, [&](Device d) { return rand_like(layout.to(d)); });
    EXPECT_TRUE(identical(g3, c3));
    auto [c4, g4] = on_both(115, [&](Device d) { return randn_like(layout.to(d)); });
    EXPECT_TRUE(normals_match(g4, c4));
  }
  manual_seed(116);
  const Tensor like = rand_like(empty_strided({3, 4}, {1, 3}, on(kGpu, DType::Float32)));
  EXPECT_EQ(like.strides().vec(), (std::vector<int64_t>{1, 3}));
}

TEST(CudaRandom, BernoulliMatchesCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kFloats) {
    SCOPED_TRACE(dtype_name(dtype));
    manual_seed(3);
    const Tensor p = rand({37, 29}, on(kHost, dtype));
    auto [c, g] = on_both(117, [&](Device d) { return bernoulli(p.to(d)); });
    EXPECT_TRUE(identical(g, c));
    auto [c2, g2] = on_both(118, [&](Device d) { return bernoulli(p.to(d).t()); });
    EXPECT_TRUE(identical(g2, c2));
  }
  auto [c, g] =
      on_both(119, [](Device d) { return bernoulli(zeros({1000003}, on(d, DType::Int64)), 0.3); });
  EXPECT_TRUE(identical(g, c));
  auto [c2, g2] = on_both(120, [](Device d) {
    Tensor self = zeros({8, 6}, on(d, DType::Float32)).slice(1, 0, 6, 2);
    bernoulli_(self, 0.25);
    return self.contiguous();
  });
  EXPECT_TRUE(identical(g2, c2));
}

TEST(CudaRandom, DrawsInARowAdvanceTheStreamAlike) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto draws = [](Device d) {
    return std::vector<Tensor>{
        rand({7}, on(d, DType::Float32)),         randn({1000003}, on(d, DType::Float32)),
        randint(0, 10, {5}, on(d, DType::Int64)), rand({3}, on(d, DType::Float64)),
        randperm(9, on(d, DType::Int64)),         rand({13}, on(d, DType::Float16))};
  };
  manual_seed(121);
  const std::vector<Tensor> c = draws(kHost);
  const uint64_t cpu_offset = default_generator().offset();
  manual_seed(121);
  const std::vector<Tensor> g = draws(kGpu);
  EXPECT_EQ(default_generator(kGpu).offset(), cpu_offset);
  EXPECT_EQ(default_generator().offset(), 0u);  // the GPU's draws leave the CPU's stream alone
  for (size_t i = 0; i < c.size(); ++i) {
    if (i == 1) {
      EXPECT_TRUE(normals_match(g[i], c[i])) << "draw " << i;
    } else {
      EXPECT_TRUE(identical(g[i], c[i])) << "draw " << i;
    }
  }
}

TEST(CudaRandom, EachDeviceHasItsOwnStream) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // Interleaved: each device's k-th draw is the k-th draw of the seed's stream.
  manual_seed(122);
  const Tensor c1 = rand({100}, on(kHost, DType::Float32));
  const Tensor g1 = rand({100}, on(kGpu, DType::Float32));
  const Tensor c2 = rand({100}, on(kHost, DType::Float32));
  const Tensor g2 = rand({100}, on(kGpu, DType::Float32));
  EXPECT_TRUE(identical(g1, c1));
  EXPECT_TRUE(identical(g2, c2));
  EXPECT_EQ(default_generator(kGpu).offset(), default_generator().offset());
  // An unindexed CUDA device names the current device's generator.
  EXPECT_EQ(&default_generator(Device(DeviceType::CUDA)),
            &default_generator(Device::cuda(kiln::cuda::current_device())));
  // An explicit generator serves whichever device the op runs on.
  Generator a(9), b(9);
  EXPECT_TRUE(normals_match(randn({257}, on(kGpu, DType::Float64), &a),
                            randn({257}, on(kHost, DType::Float64), &b)));
  EXPECT_EQ(a.offset(), b.offset());
}

TEST(CudaRandom, DifferentSeedsDiffer) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  manual_seed(123);
  const Tensor a = rand({1000}, on(kGpu, DType::Float32));
  manual_seed(124);
  const Tensor b = rand({1000}, on(kGpu, DType::Float32));
  EXPECT_FALSE(identical(a, cpu(b)));
  manual_seed(123);
  const Tensor c = randn({1000}, on(kGpu, DType::Float32));
  const Tensor d = randn({1000}, on(kGpu, DType::Float32));  // the stream moved on
  EXPECT_FALSE(identical(c, cpu(d)));
}

TEST(CudaRandom, DropoutMatchesCpuMask) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kFloats) {
    for (int64_t n : kSizes) {
      for (double p : {0.1, 0.5, 1.0}) {
        SCOPED_TRACE(fmt::format("{} n={} p={}", dtype_name(dtype), n, p));
        const Tensor x = sample({n}, dtype, 4);
        manual_seed(125);
        auto [out, mask] = native_dropout(x, p);
        manual_seed(125);
        auto [gout, gmask] = native_dropout(gpu(x), p);
        EXPECT_TRUE(identical(gmask, mask));
        EXPECT_TRUE(identical(gout, out));
      }
    }
  }
  const Tensor x = sample({4, 33}, DType::Float32, 5);
  auto [c, g] = on_both(126, [&](Device d) { return dropout(x.to(d).t(), 0.3); });
  EXPECT_TRUE(identical(g, c));  // the composite, on a transposed input
  auto [c2, g2] = on_both(127, [&](Device d) { return dropout(x.to(d), 0.3, false); });
  EXPECT_TRUE(identical(g2, c2));  // eval: the input itself
  auto [c3, g3] =
      on_both(128, [&](Device d) { return native_dropout(x.to(d), 0.4, false).second; });
  EXPECT_TRUE(identical(g3, c3));  // eval: a mask of ones
}

TEST(CudaRandom, ValueChecksRaiseAsOnTheCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor mean = zeros({3}, on(kGpu, DType::Float32));
  const Tensor bad_std = full({3}, -1.0, on(kGpu, DType::Float32));
  EXPECT_TRUE(throws_error([&] { normal(mean, bad_std); },
                           {"normal", "expects all elements of std >= 0.0", "-1"}));
  const Tensor bad_p = full({4}, 1.5, on(kGpu, DType::Float32));
  EXPECT_TRUE(throws_error([&] { bernoulli(bad_p); }, {"bernoulli", "[0, 1]", "1.5"}));
  Tensor self = zeros({4}, on(kGpu, DType::Float32));
  EXPECT_TRUE(throws_error([&] { uniform_(self, 2.0, 1.0); }, {"uniform_", "from=2 > to=1"}));
  EXPECT_TRUE(throws_error([&] { bernoulli_(self, 2.0); }, {"bernoulli_", "0 <= p <= 1"}));
  Tensor ints = zeros({4}, on(kGpu, DType::Int64));
  EXPECT_TRUE(throws_error([&] { normal_(ints); }, {"normal_", "floating point"}));
}

}  // namespace
}  // namespace kiln
