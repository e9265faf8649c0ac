// Random ops: Philox known answers, the documented counter mapping, statistics on 1e6 samples,
// reproducibility with manual_seed and independence from the thread count.
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

namespace kiln {
namespace {

using testing::throws_error;
using testing::values;

constexpr int64_t kSamples = 1000000;

struct Moments {
  double mean, std;
};

Moments moments(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / static_cast<double>(v.size()))};
}

bool identical(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes().vec() == b.sizes().vec() && values(a) == values(b);
}

// Restores the thread count a test changes.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(get_num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

// ---------------------------------------------------------------- Philox and the generator

TEST(RandomPhilox, KnownAnswers) {
  // Random123's kat_vectors for philox4x32_10 (counter words low first, then the key words).
  using A = std::array<uint32_t, 4>;
  EXPECT_EQ(Philox4x32::draw(0, 0, 0), (A{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32::draw(~0ull, ~0ull, ~0ull),
            (A{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32::draw(0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull),
            (A{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomGenerator, ReserveAdvancesOffsetAndSeedResetsIt) {
  Generator g(5);
  EXPECT_EQ(g.seed(), 5u);
  EXPECT_EQ(g.reserve(3), 0u);
  EXPECT_EQ(g.reserve(2), 3u);
  EXPECT_EQ(g.offset(), 5u);
  g.set_offset(100);
  EXPECT_EQ(g.reserve(1), 100u);
  EXPECT_EQ(g.seed_and_reserve(4), (std::pair<uint64_t, uint64_t>{5, 101}));
  EXPECT_EQ(g.offset(), 105u);
  g.manual_seed(9);
  EXPECT_EQ(g.seed(), 9u);
  EXPECT_EQ(g.offset(), 0u);
}

TEST(RandomGenerator, ConcurrentReservationsNeverOverlap) {
  Generator g(1);
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::vector<uint64_t>> firsts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) firsts[static_cast<size_t>(t)].push_back(g.reserve(3));
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (const auto& f : firsts) all.insert(f.begin(), f.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(g.offset(), static_cast<uint64_t>(3 * kThreads * kEach));
  for (uint64_t first : all) EXPECT_EQ(first % 3, 0u);
}

TEST(RandomGenerator, ManualSeedReseedsDefault) {
  manual_seed(1234);
  EXPECT_EQ(default_generator().seed(), 1234u);
  EXPECT_EQ(default_generator().offset(), 0u);
  rand({10});  // 10 float32 uniforms use one word each: 3 counters
  EXPECT_EQ(default_generator().offset(), 3u);
  randn({10});  // Box-Muller pairs: two words per two elements, 3 counters
  EXPECT_EQ(default_generator().offset(), 6u);
  rand({3}, kFloat64);  // two words each: 2 counters
  EXPECT_EQ(default_generator().offset(), 8u);
}

TEST(RandomGenerator, ElementsFollowTheCounterMapping) {
  // Element i of a float32 uniform draw is word i % 4 of counter (offset + i / 4), top 24 bits.
  manual_seed(77);
  rand({5});  // offset now 2
  Tensor t = rand({9});
  auto v = values(t);
  for (size_t i = 0; i < v.size(); ++i) {
    auto block = Philox4x32::draw(2 + i / 4, 0, 77);
    double ref = static_cast<double>(block[i % 4] >> 8) * std::ldexp(1.0, -24);
    EXPECT_EQ(v[i], ref) << "element " << i;
  }
}

TEST(RandomGenerator, NormalPairsFollowBoxMuller) {
  // Pair k = (2k, 2k+1) of a float32 normal draw takes words 2k, 2k+1 of the stream: u1 (shifted
  // into (0, 1]) and u2, giving r cos(2 pi u2) and r sin(2 pi u2), r = sqrt(-2 log u1).
  manual_seed(31);
  auto v = values(randn({7}));
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t word = (i / 2) * 2;
    auto block = Philox4x32::draw(word / 4, 0, 31);
    const double u1 = static_cast<double>((block[word % 4] >> 8) + 1) * std::ldexp(1.0, -24);
    const double u2 = static_cast<double>(block[word % 4 + 1] >> 8) * std::ldexp(1.0, -24);
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * std::numbers::pi * u2;
    const double ref = i % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
    EXPECT_NEAR(v[i], ref, 1e-6 * std::max(1.0, std::abs(ref))) << "element " << i;
  }
}

TEST(RandomGenerator, ExplicitGeneratorLeavesDefaultAlone) {
  manual_seed(3);
  Generator g1(11), g2(11);
  Tensor a = rand({100}, {}, &g1);
  Tensor b = rand({100}, {}, &g2);
  EXPECT_TRUE(identical(a, b));
  EXPECT_EQ(default_generator().offset(), 0u);
  EXPECT_EQ(g1.offset(), 25u);
  Tensor c = rand({100}, {}, &g1);  // the next counters: different numbers
  EXPECT_FALSE(identical(a, c));
}

// ---------------------------------------------------------------- reproducibility

TEST(RandomReproducibility, SameSeedSameNumbers) {
  auto draw_all = [] {
    std::vector<Tensor> out;
    out.push_back(rand({64, 3}));
    out.push_back(randn({101}));
    out.push_back(randint(-4, 9, {50}));
    out.push_back(normal(1.0, 2.0, {20}));
    out.push_back(bernoulli(full({40}, 0.5)));
    out.push_back(randperm(30));
    Tensor u = empty({17});
    uniform_(u, -1, 1);
    out.push_back(u);
    return out;
  };
  manual_seed(42);
  auto first = draw_all();
  manual_seed(42);
  auto second = draw_all();
  manual_seed(43);
  auto other = draw_all();
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_TRUE(identical(first[i], second[i])) << "draw " << i;
    EXPECT_FALSE(identical(first[i], other[i])) << "draw " << i;
  }
  EXPECT_FALSE(identical(first[0], rand({64, 3})));  // the offset moved on
}

TEST(RandomReproducibility, IndependentOfThreadCount) {
  ThreadCountGuard guard;
  const int64_t n = 300000;  // several parallel chunks
  auto draw_all = [&] {
    manual_seed(2024);
    std::vector<Tensor> out;
    out.push_back(rand({n}));
    out.push_back(randn({n}, kFloat64));
    out.push_back(randint(0, 1000, {n}));
    out.push_back(bernoulli(full({n}, 0.25)));
    out.push_back(normal(full({n}, 1.0), full({n}, 3.0)));
    out.push_back(rand({n}, kFloat16));
    return out;
  };
  set_num_threads(1);
  auto one = draw_all();
  set_num_threads(2);
  auto two = draw_all();
  set_num_threads(3);
  auto three = draw_all();
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_TRUE(identical(one[i], two[i])) << "draw " << i;
    EXPECT_TRUE(identical(one[i], three[i])) << "draw " << i;
  }
}

// ---------------------------------------------------------------- rand / uniform_

TEST(RandomRand, UniformStatistics) {
  manual_seed(1);
  auto v = values(rand({kSamples}));
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0);
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.5, 0.01);
  EXPECT_NEAR(m.std, std::sqrt(1.0 / 12.0), 0.01);
}

TEST(RandomRand, Dtypes) {
  manual_seed(2);
  for (DType d : {kFloat64, kFloat16, kBFloat16}) {
    Tensor t = rand({100000}, d);
    EXPECT_EQ(t.dtype(), d);
    auto v = values(t);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0);  // never rounds up to 1
    EXPECT_NEAR(moments(v).mean, 0.5, 0.01) << dtype_name(d);
  }
  Tensor s = rand({});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(rand({0, 5}).numel(), 0);
  EXPECT_TRUE(throws_error([] { rand({3}, kInt64); }, {"rand", "floating point"}));
}

TEST(RandomRand, MetaDeviceDrawsNothing) {
  manual_seed(5);
  Tensor t = rand({4, 5}, TensorOptions(Device::meta()));
  EXPECT_TRUE(t.is_meta());
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(default_generator().offset(), 0u);
}

TEST(RandomUniform, RangeAndStridedSelf) {
  manual_seed(3);
  Tensor t = empty({kSamples}, kFloat64);
  uniform_(t, -2.0, 3.0);
  auto v = values(t);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -2.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 3.0);
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.5, 0.01);
  EXPECT_NEAR(m.std, 5.0 / std::sqrt(12.0), 0.01);
  // A transposed (non-contiguous) self receives the values in row-major order.
  manual_seed(4);
  Tensor strided = empty_strided({3, 2}, {1, 3}, kFloat32);
  strided.uniform_();
  manual_seed(4);
  Tensor dense = rand({3, 2});
  EXPECT_EQ(strided.strides().vec(), (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(identical(strided, dense));
}

TEST(RandomUniform, BadArgumentsRaise) {
  Tensor i = zeros({3}, kInt64);
  EXPECT_TRUE(throws_error([&] { uniform_(i); }, {"uniform_", "floating point"}));
  Tensor f = zeros({3});
  EXPECT_TRUE(throws_error([&] { uniform_(f, 2.0, 1.0); }, {"uniform_", "from=2", "to=1"}));
}

// ---------------------------------------------------------------- randn / normal

TEST(RandomRandn, NormalStatistics) {
  for (DType d : {kFloat32, kFloat64}) {
    manual_seed(6);
    auto v = values(randn({kSamples}, d));
    Moments m = moments(v);
    EXPECT_NEAR(m.mean, 0.0, 0.01) << dtype_name(d);
    EXPECT_NEAR(m.std, 1.0, 0.01) << dtype_name(d);
    // About 68.3% within one standard deviation.
    double within = static_cast<double>(std::count_if(v.begin(), v.end(),
                                                      [](double x) { return std::abs(x) < 1; })) /
                    static_cast<double>(v.size());
    EXPECT_NEAR(within, 0.6827, 0.01);
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
  }
  manual_seed(7);
  auto h = values(randn({100000}, kBFloat16));
  EXPECT_NEAR(moments(h).mean, 0.0, 0.02);
  EXPECT_NEAR(moments(h).std, 1.0, 0.02);
}

TEST(RandomNormal, ScalarMeanAndStd) {
  manual_seed(8);
  auto v = values(normal(2.0, 0.5, {kSamples}));
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, 2.0, 0.01);
  EXPECT_NEAR(m.std, 0.5, 0.01);
  EXPECT_TRUE(throws_error([] { normal(0.0, -1.0, {3}); }, {"normal", "std >= 0.0"}));
}

TEST(RandomNormal, TensorMeanAndStd) {
  manual_seed(9);
  Tensor mean = full({kSamples}, -1.0);
  Tensor std = full({kSamples}, 2.0);
  Moments m = moments(values(normal(mean, std)));
  EXPECT_NEAR(m.mean, -1.0, 0.01);
  EXPECT_NEAR(m.std, 2.0, 0.01);
  // Broadcasting: mean [2, 1] with std [3] gives [2, 3]; std 0 returns the mean exactly.
  Tensor mean2 = from_vector<float>({1.5f, -4.0f}, {2, 1});
  Tensor zero_std = zeros({3});
  Tensor out = normal(mean2, zero_std);
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(values(out), (std::vector<double>{1.5, 1.5, 1.5, -4, -4, -4}));
  // float64 mean with float32 std promotes to float64.
  EXPECT_EQ(normal(zeros({2}, kFloat64), ones({2})).dtype(), kFloat64);
  EXPECT_TRUE(throws_error(
      [] {
        normal(zeros({2}), from_vector<float>({1.0f, -0.5f}));
      },
      {"normal", "std >= 0.0"}));
  EXPECT_TRUE(throws_error([] { normal(zeros({2}, kInt64), ones({2}, kInt64)); },
                           {"normal", "floating point"}));
}

TEST(RandomNormal, InPlaceOnTransposed) {
  manual_seed(10);
  Tensor t = empty_strided({1000, 1000}, {1, 1000}, kFloat32);
  normal_(t, 3.0, 0.25);
  Moments m = moments(values(t));
  EXPECT_NEAR(m.mean, 3.0, 0.01);
  EXPECT_NEAR(m.std, 0.25, 0.01);
  Tensor i = zeros({2}, kInt32);
  EXPECT_TRUE(throws_error([&] { normal_(i); }, {"normal_", "floating point"}));
  Tensor f = zeros({2});
  EXPECT_TRUE(throws_error([&] { normal_(f, 0, -2); }, {"normal_", "std >= 0.0"}));
}

TEST(RandomNormal, RegisteredScalarTensorOverloads) {
  manual_seed(11);
  const auto& tf = ops::OpRegistry::instance().get("normal.Tensor_float");
  Tensor a = ops::call1(tf, {full({2, 2}, 5.0, kFloat64), 0.0});
  EXPECT_EQ(a.dtype(), kFloat64);
  EXPECT_EQ(values(a), std::vector<double>(4, 5.0));
  const auto& ft = ops::OpRegistry::instance().get("normal.float_Tensor");
  Tensor b = ops::call1(ft, {-2.0, zeros({3})});
  EXPECT_EQ(b.dtype(), kFloat32);
  EXPECT_EQ(values(b), std::vector<double>(3, -2.0));
}

// ---------------------------------------------------------------- bernoulli

TEST(RandomBernoulli, TensorProbabilities) {
  manual_seed(12);
  Tensor out = bernoulli(full({kSamples}, 0.3));
  EXPECT_EQ(out.dtype(), kFloat32);
  auto v = values(out);
  for (double x : v) ASSERT_TRUE(x == 0.0 || x == 1.0);
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.3, 0.01);
  EXPECT_NEAR(m.std, std::sqrt(0.3 * 0.7), 0.01);
  // p = 0 and p = 1 are certain, element by element.
  Tensor p = from_vector<double>({0, 1, 0, 1, 1}, {5});
  Tensor certain = bernoulli(p);
  EXPECT_EQ(certain.dtype(), kFloat64);
  EXPECT_EQ(values(certain), (std::vector<double>{0, 1, 0, 1, 1}));
  EXPECT_TRUE(throws_error(
      [] {
        bernoulli(from_vector<float>({0.5f, 1.5f}));
      },
      {"bernoulli", "[0, 1]"}));
  EXPECT_TRUE(throws_error([] { bernoulli(zeros({2}, kInt64)); }, {"bernoulli", "floating"}));
}

TEST(RandomBernoulli, ScalarProbability) {
  manual_seed(13);
  Tensor self = zeros({kSamples}, kInt64);
  Tensor out = bernoulli(self, 0.7);
  EXPECT_EQ(out.dtype(), kInt64);
  Moments m = moments(values(out));
  EXPECT_NEAR(m.mean, 0.7, 0.01);
  EXPECT_NEAR(m.std, std::sqrt(0.7 * 0.3), 0.01);
  EXPECT_TRUE(throws_error([&] { bernoulli(self, -0.1); }, {"bernoulli", "0 <= p <= 1"}));
}

TEST(RandomBernoulli, InPlace) {
  manual_seed(14);
  Tensor t = empty({kSamples}, kBool);
  bernoulli_(t, 0.2);
  EXPECT_NEAR(moments(values(t)).mean, 0.2, 0.01);
  Tensor f = empty_strided({500, 2000}, {1, 500}, kFloat64);
  f.bernoulli_();
  EXPECT_NEAR(moments(values(f)).mean, 0.5, 0.01);
  EXPECT_TRUE(throws_error([&] { bernoulli_(t, 2.0); }, {"bernoulli_", "0 <= p <= 1"}));
}

TEST(RandomBernoulli, ScalarAndTensorPAgree) {
  // bernoulli(self, p) draws the same uniforms as bernoulli(full_like(self, p)).
  manual_seed(15);
  Tensor a = bernoulli(zeros({1000}), 0.4);
  manual_seed(15);
  Tensor b = bernoulli(full({1000}, 0.4));
  EXPECT_TRUE(identical(a, b));
}

// ---------------------------------------------------------------- randint

TEST(RandomRandint, CoversRangeNeverHigh) {
  manual_seed(16);
  Tensor t = randint(-5, 5, {kSamples});
  EXPECT_EQ(t.dtype(), kInt64);
  auto v = t.tolist<int64_t>();
  std::vector<int64_t> counts(10, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -5);
    ASSERT_LT(x, 5);
    ++counts[static_cast<size_t>(x + 5)];
  }
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c) / kSamples, 0.1, 0.005);
  std::vector<double> d(v.begin(), v.end());
  Moments m = moments(d);
  EXPECT_NEAR(m.mean, -0.5, 0.01);
  EXPECT_NEAR(m.std, std::sqrt((100.0 - 1.0) / 12.0), 0.01);
}

TEST(RandomRandint, HighOnlyDtypesAndWideRanges) {
  manual_seed(17);
  auto v = randint(3, {1000}).tolist<int64_t>();
  EXPECT_EQ(std::set<int64_t>(v.begin(), v.end()), (std::set<int64_t>{0, 1, 2}));
  Tensor i8 = randint(-128, 128, {10000}, kInt8);
  EXPECT_EQ(i8.dtype(), kInt8);
  auto v8 = values(i8);
  EXPECT_EQ(*std::min_element(v8.begin(), v8.end()), -128);
  EXPECT_EQ(*std::max_element(v8.begin(), v8.end()), 127);
  Tensor f = randint(0, 10, {100}, kFloat32);
  for (double x : values(f)) EXPECT_EQ(x, std::floor(x));
  // A range wider than 32 bits uses 64-bit draws.
  const int64_t big = int64_t{1} << 40;
  auto w = randint(-big, big, {100000}).tolist<int64_t>();
  EXPECT_GE(*std::min_element(w.begin(), w.end()), -big);
  EXPECT_LT(*std::max_element(w.begin(), w.end()), big);
  std::vector<double> wd(w.begin(), w.end());
  EXPECT_NEAR(moments(wd).mean / static_cast<double>(big), 0.0, 0.01);
}

TEST(RandomRandint, BadArgumentsRaise) {
  EXPECT_TRUE(throws_error([] { randint(5, 5, {3}); }, {"randint", "from=5 >= to=5"}));
  EXPECT_TRUE(throws_error([] { randint(0, 300, {3}, kUInt8); }, {"randint", "out of bounds"}));
  EXPECT_TRUE(throws_error([] { randint(0, 2, {3}, kBool); }, {"randint", "bool"}));
}

// ---------------------------------------------------------------- randperm

TEST(RandomRandperm, IsAPermutation) {
  manual_seed(18);
  for (int64_t n : {1, 2, 7, 1000, 100000}) {
    auto v = randperm(n).tolist<int64_t>();
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> expected(static_cast<size_t>(n));
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(sorted, expected) << "n = " << n;
  }
  // Shuffled: a fixed point count near 1 (not the identity) for n = 1000.
  auto v = randperm(1000).tolist<int64_t>();
  int64_t fixed = 0;
  for (size_t i = 0; i < v.size(); ++i) fixed += v[i] == static_cast<int64_t>(i);
  EXPECT_LT(fixed, 10);
}

TEST(RandomRandperm, DtypesEmptyAndErrors) {
  manual_seed(19);
  Tensor t = randperm(50, kInt32);
  EXPECT_EQ(t.dtype(), kInt32);
  auto v = t.tolist<int32_t>();
  std::sort(v.begin(), v.end());
  for (int32_t i = 0; i < 50; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], i);
  Tensor f = randperm(20, kFloat32);
  auto fv = values(f);
  std::sort(fv.begin(), fv.end());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(fv[static_cast<size_t>(i)], i);
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_TRUE(throws_error([] { randperm(-1); }, {"randperm", "non-negative"}));
  EXPECT_TRUE(throws_error([] { randperm(300, kInt8); }, {"randperm", "too large"}));
}

// ---------------------------------------------------------------- *_like

TEST(RandomLike, KeepsLayoutAndDtype) {
  Tensor x = empty_strided({3, 4}, {1, 3}, kFloat64);
  manual_seed(20);
  Tensor r = rand_like(x);
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_EQ(r.strides().vec(), (std::vector<int64_t>{1, 3}));
  Tensor n = randn_like(x, kFloat32);
  EXPECT_EQ(n.dtype(), kFloat32);
  EXPECT_EQ(n.strides().vec(), (std::vector<int64_t>{1, 3}));
  // Same numbers as a plain draw of the same shape and dtype, in row-major order.
  manual_seed(20);
  EXPECT_TRUE(identical(r, rand({3, 4}, kFloat64)));
  EXPECT_TRUE(throws_error([] { rand_like(zeros({2}, kInt64)); }, {"rand_like", "floating"}));
  manual_seed(21);
  Moments m = moments(values(randn_like(empty({kSamples}))));
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_NEAR(m.std, 1.0, 0.01);
}

TEST(RandomOps, DeclaredRandom) {
  for (const char* name :
       {"rand", "randn", "randint", "randint.low", "normal.float_float", "normal.Tensor_Tensor",
        "normal.Tensor_float", "normal.float_Tensor", "bernoulli", "bernoulli.p",
        "bernoulli_.float", "uniform_", "normal_", "randperm", "rand_like", "randn_like"}) {
    EXPECT_TRUE(ops::OpRegistry::instance().get(name).is_random) << name;
  }
}

}  // namespace
}  // namespace kiln
