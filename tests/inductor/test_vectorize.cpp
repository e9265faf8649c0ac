// The vector type of generated kernels (vec_prelude) and the vector loop writer (vectorize):
// the prelude compiles warning-free with g++ and clang++; every vector op matches the scalar
// semantics over NaN, infinities, signed zeros, out-of-domain and huge inputs and partial chunks
// (exactly, or within 2 ulp for SLEEF's functions, 4 for float32's 3.5-ulp variants); written loops
// compute their bodies, hand the remainder to the scalar tail, and decline what they cannot
// vectorize.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>

#include <kiln/core/half.h>

#include "inductor/code_cache.h"
#include "inductor/codegen_cpp.h"
#include "inductor/sincos_pairing.h"
#include "inductor/vec_prelude.h"
#include "inductor/vectorize.h"

namespace kiln::inductor {
namespace {

// --- compiling test translation units -----------------------------------------------------------

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / program)) return true;
  }
  return false;
}

// The compilers to check: g++ and clang++ (when installed), with warnings as errors.
std::vector<std::string> compilers() {
  std::vector<std::string> out = {"g++"};
  if (on_path("clang++")) out.push_back("clang++");
  return out;
}

// A translation unit as the code generator writes one: its preludes (scalar and vector), then
// `code`.
std::shared_ptr<const LoadedModule> compile(const std::string& code, const std::string& cxx) {
  CompilerConfig config = CompilerConfig::from_environment();
  config.cxx = cxx;
  for (const char* flag : {"-Wall", "-Wextra", "-Werror"}) config.flags.push_back(flag);
  Program empty;
  return load_or_compile(generate_cpp(empty).joined() + code, config, compile_arguments(),
                         "vectorize test");
}

template <typename F>
F function(const LoadedModule& m, const std::string& name) {
  return reinterpret_cast<F>(m.symbol(name));
}

// --- comparing floating-point values ------------------------------------------------------------

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;

// Distance in units in the last place (+0 and -0 are one point).
template <typename T>
int64_t ulps(T a, T b) {
  auto ordered = [](T x) -> int64_t {
    const auto bits = std::bit_cast<Bits<T>>(x);
    return bits < 0 ? -static_cast<int64_t>(bits & std::numeric_limits<Bits<T>>::max()) : bits;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Same bits, or both NaN.
template <typename T>
bool identical(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<Bits<T>>(a) == std::bit_cast<Bits<T>>(b);
}

template <typename T>
bool close_enough(T got, T want, int64_t max_ulps) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  return ulps(got, want) <= max_ulps;
}

// --- the ops of the prelude against the scalar reference ---------------------------------------

constexpr const char* kOpHarness = R"(
#include <type_traits>
namespace {
// One chunk of up to N values through a full vector: the tail lanes are padding.
template <typename V> V kiln_t_load(const typename V::value_type* p, int64_t k) {
  typename V::value_type buf[V::size] = {};
  for (int64_t i = 0; i < k; ++i) buf[i] = p[i];
  return V::load(buf);
}
template <typename V> void kiln_t_store(V v, typename V::value_type* p, int64_t k) {
  typename V::value_type buf[V::size];
  v.store(buf);
  for (int64_t i = 0; i < k; ++i) p[i] = buf[i];
}
template <typename M> M kiln_t_load_bools(const bool* p, int64_t k) {
  bool buf[64] = {};
  for (int64_t i = 0; i < k; ++i) buf[i] = p[i];
  return M::load_bools(buf);
}
template <typename M> void kiln_t_store_bools(M m, bool* p, int64_t k) {
  bool buf[64];
  m.store_bools(buf);
  for (int64_t i = 0; i < k; ++i) p[i] = buf[i];
}
// out[i] = f(x[i], y[i], c[i]) chunk by chunk, the last one partial.
template <typename V, typename Out, typename F>
void kiln_t_map(const typename V::value_type* x, const typename V::value_type* y, const bool* c,
                Out* out, int64_t n, F f) {
  using M = typename V::mask;
  for (int64_t i = 0; i < n; i += V::size) {
    const int64_t k = std::min<int64_t>(V::size, n - i);
    const auto r = f(kiln_t_load<V>(x + i, k), kiln_t_load<V>(y + i, k),
                     kiln_t_load_bools<M>(c + i, k));
    if constexpr (std::is_same_v<Out, bool>) {
      kiln_t_store_bools(r, out + i, k);
    } else {
      kiln_t_store(r, out + i, k);
    }
  }
}
template <typename V, typename A>
void kiln_t_reduce(const typename V::value_type* x, int64_t chunks, A* sum, A* prod,
                   typename V::value_type* max, typename V::value_type* min) {
  for (int64_t c = 0; c < chunks; ++c) {
    const V v = V::load(x + c * V::size);
    sum[c] = reduce_add<A>(v);
    prod[c] = reduce_mul<A>(v);
    max[c] = reduce_max(v);
    min[c] = reduce_min(v);
  }
}
}  // namespace
extern "C" int kiln_t_width_float() { return kiln_vec_width_float; }
extern "C" int kiln_t_width_double() { return kiln_vec_width_double; }
extern "C" void kiln_t_f_reduce(const float* x, int64_t chunks, double* sum, double* prod,
                                float* max, float* min) {
  kiln_t_reduce<VecF>(x, chunks, sum, prod, max, min);
}
extern "C" void kiln_t_d_reduce(const double* x, int64_t chunks, double* sum, double* prod,
                                double* max, double* min) {
  kiln_t_reduce<VecD>(x, chunks, sum, prod, max, min);
}
)";

// The ops checked exactly: name, vector expression of a, b (V) and m (a mask), and whether the
// result is a mask.
struct ExactOp {
  std::string name, expression;
  bool mask = false;
};

const std::vector<ExactOp>& exact_ops() {
  static const std::vector<ExactOp> ops = {
      {"add", "a + b"},
      {"sub", "a - b"},
      {"mul", "a * b"},
      {"div", "a / b"},
      {"neg", "-a"},
      {"abs", "vec_abs(a)"},
      {"sqrt", "vec_sqrt(a)"},
      {"rsqrt", "vec_rsqrt(a)"},
      {"floor", "vec_floor(a)"},
      {"ceil", "vec_ceil(a)"},
      {"trunc", "vec_trunc(a)"},
      {"round", "vec_round(a)"},
      {"maximum", "vec_maximum(a, b)"},
      {"minimum", "vec_minimum(a, b)"},
      {"accumulate_maximum", "vec_accumulate_maximum(a, b)"},
      {"accumulate_minimum", "vec_accumulate_minimum(a, b)"},
      {"div_trunc", "vec_div_trunc(a, b)"},
      {"div_floor", "vec_div_floor(a, b)"},
      {"where", "vec_where(m, a, b)"},
      {"from_mask", "decltype(a)::from_mask(m)"},
      {"iota", "decltype(a)::iota(3)"},
      {"broadcast", "decltype(a)::broadcast(b.v[0])"},
      {"eq", "a == b", true},
      {"ne", "a != b", true},
      {"lt", "a < b", true},
      {"le", "a <= b", true},
      {"gt", "a > b", true},
      {"ge", "a >= b", true},
      {"and", "m & (a < b)", true},
      {"or", "m | (a < b)", true},
      {"xor", "m ^ (a < b)", true},
      {"not", "~m", true},
      {"bools", "m", true},
      {"mask_broadcast", "decltype(m)::broadcast(true) & (a == a)", true},
      {"where_mask", "vec_where(m, a < b, a > b)", true},
  };
  return ops;
}

template <typename T>
T kiln_maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}
template <typename T>
T kiln_minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
}

// The scalar semantics (codegen_cpp.cpp's), lane `lane` of element i.
template <typename T>
T exact_reference(const std::string& op, T a, T b, bool m, int lane) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "neg") return -a;
  if (op == "abs") return std::abs(a);
  if (op == "sqrt") return std::sqrt(a);
  if (op == "rsqrt") return T(1) / std::sqrt(a);
  if (op == "floor") return std::floor(a);
  if (op == "ceil") return std::ceil(a);
  if (op == "trunc") return std::trunc(a);
  if (op == "round") return std::nearbyint(a);
  if (op == "maximum") return kiln_maximum(a, b);
  if (op == "minimum") return kiln_minimum(a, b);
  // An accumulator a: a NaN b enters, a NaN a stays, a tie keeps a.
  if (op == "accumulate_maximum") return b != b ? b : (b > a ? b : a);
  if (op == "accumulate_minimum") return b != b ? b : (b < a ? b : a);
  if (op == "div_trunc") return std::trunc(a / b);
  if (op == "div_floor") return std::floor(a / b);
  if (op == "where") return m ? a : b;
  if (op == "from_mask") return static_cast<T>(m);
  if (op == "iota") return T(3 + lane);
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

bool mask_reference(const std::string& op, double a, double b, bool m) {
  if (op == "eq") return a == b;
  if (op == "ne") return a != b;
  if (op == "lt") return a < b;
  if (op == "le") return a <= b;
  if (op == "gt") return a > b;
  if (op == "ge") return a >= b;
  if (op == "and") return m && a < b;
  if (op == "or") return m || a < b;
  if (op == "xor") return m != (a < b);
  if (op == "not") return !m;
  if (op == "bools") return m;
  if (op == "mask_broadcast") return a == a;
  if (op == "where_mask") return m ? a < b : a > b;
  ADD_FAILURE() << "no reference for " << op;
  return false;
}

// Inputs: every pair of special values, then random ones of several magnitudes; a length that
// is no multiple of any vector width.
template <typename T>
struct Inputs {
  std::vector<T> x, y;
  std::unique_ptr<bool[]> c;
  int64_t n = 0;
};

template <typename T>
Inputs<T> make_inputs() {
  using L = std::numeric_limits<T>;
  const std::vector<T> specials = {
      L::quiet_NaN(), L::infinity(), -L::infinity(), T(0),
      -T(0),          T(1),          T(-1),          T(0.5),
      T(-0.5),        T(1.5),        T(2.5),         T(-2.5),
      T(-7.25),       T(1e-30),      T(-1e-30),      L::denorm_min() * 3,
      T(1e30),        T(-1e30),      L::max(),       L::lowest(),
      T(88.5),        T(-88.5),      T(700),         T(-745),
      T(0.1),         T(3.14159265), T(-2.71828),    T(1e10),
      T(123456.7),    T(0.999),      T(1.001),       T(-0.999)};
  Inputs<T> in;
  for (T a : specials) {
    for (T b : specials) {
      in.x.push_back(a);
      in.y.push_back(b);
    }
  }
  std::mt19937 rng(7);
  const double decades = sizeof(T) == 4 ? 40 : 310;  // magnitudes up to overflow
  std::uniform_real_distribution<double> near(-20, 20), exponent(-decades, decades);
  for (int i = 0; i < 300; ++i) {
    in.x.push_back(T(near(rng)));
    in.y.push_back(T(near(rng) / 4));
  }
  for (int i = 0; i < 203; ++i) {
    const double sign = i % 2 ? -1 : 1;
    in.x.push_back(T(sign * std::pow(10.0, exponent(rng))));
    in.y.push_back(T(std::pow(10.0, exponent(rng) / 8)));
  }
  in.n = static_cast<int64_t>(in.x.size());
  in.c = std::make_unique<bool[]>(static_cast<size_t>(in.n));
  for (int64_t i = 0; i < in.n; ++i) in.c[static_cast<size_t>(i)] = rng() % 2 != 0;
  return in;
}

// Test functions of every op for one lane type: kiln_t_<f|d>_<op>(x, y, c, out, n).
std::string op_functions(const std::string& tag, const std::string& vec, const std::string& mask,
                         const std::string& scalar) {
  std::string s;
  auto add = [&](const std::string& name, const std::string& expression, bool is_mask) {
    s += fmt::format(
        "extern \"C\" void kiln_t_{0}_{1}(const {2}* x, const {2}* y, const bool* c, {3}* out, "
        "int64_t n) {{\n  kiln_t_map<{4}>(x, y, c, out, n, []([[maybe_unused]] {4} a, "
        "[[maybe_unused]] {4} b, [[maybe_unused]] {5} m) {{ return {6}; }});\n}}\n",
        tag, name, scalar, is_mask ? "bool" : scalar, vec, mask, expression);
  };
  for (const ExactOp& op : exact_ops()) add(op.name, op.expression, op.mask);
  for (const std::string& f : unary_math_functions()) add(f, fmt::format("vec_{}(a)", f), false);
  for (const std::string& f : binary_math_functions()) {
    add(f, fmt::format("vec_{}(a, b)", f), false);
  }
  return s;
}

std::string op_test_source() {
  return kOpHarness + op_functions("f", "VecF", "MaskF", "float") +
         op_functions("d", "VecD", "MaskD", "double");
}

// The libm function `name` in long double (a reference more accurate than either side).
long double libm(const std::string& name, long double a, long double b) {
  static const std::map<std::string, long double (*)(long double)> unary = {
      {"sin", std::sin},   {"cos", std::cos},     {"tan", std::tan},     {"asin", std::asin},
      {"acos", std::acos}, {"atan", std::atan},   {"sinh", std::sinh},   {"cosh", std::cosh},
      {"tanh", std::tanh}, {"asinh", std::asinh}, {"acosh", std::acosh}, {"atanh", std::atanh},
      {"exp", std::exp},   {"exp2", std::exp2},   {"expm1", std::expm1}, {"log", std::log},
      {"log2", std::log2}, {"log10", std::log10}, {"log1p", std::log1p}, {"erf", std::erf},
      {"erfc", std::erfc}};
  if (name == "pow") return std::pow(a, b);
  if (name == "atan2") return std::atan2(a, b);
  return unary.at(name)(a);
}

template <typename T>
void check_ops(const LoadedModule& module, const std::string& tag, const std::string& cxx) {
  using OpFunction = void (*)(const T*, const T*, const bool*, void*, int64_t);
  const Inputs<T> in = make_inputs<T>();
  const int width = function<int (*)()>(
      module, std::string("kiln_t_width_") + (sizeof(T) == 4 ? "float" : "double"))();
  const auto n = static_cast<size_t>(in.n);
  for (const ExactOp& op : exact_ops()) {
    auto f = function<OpFunction>(module, fmt::format("kiln_t_{}_{}", tag, op.name));
    int failures = 0;
    if (op.mask) {
      std::unique_ptr<bool[]> out = std::make_unique<bool[]>(n);
      f(in.x.data(), in.y.data(), in.c.get(), out.get(), in.n);
      for (size_t i = 0; i < n && failures < 5; ++i) {
        const bool want = mask_reference(op.name, in.x[i], in.y[i], in.c[i]);
        unsigned char byte = 0;
        std::memcpy(&byte, &out[i], 1);
        if (byte != (want ? 1 : 0)) {
          ++failures;
          ADD_FAILURE() << cxx << " " << tag << " " << op.name << "(" << in.x[i] << ", " << in.y[i]
                        << ", " << in.c[i] << ") = byte " << int(byte);
        }
      }
      continue;
    }
    std::vector<T> out(n);
    f(in.x.data(), in.y.data(), in.c.get(), out.data(), in.n);
    for (size_t i = 0; i < n && failures < 5; ++i) {
      const size_t chunk_start = i / static_cast<size_t>(width) * static_cast<size_t>(width);
      const T want = op.name == "broadcast"
                         ? in.y[chunk_start]
                         : exact_reference<T>(op.name, in.x[i], in.y[i], in.c[i],
                                              static_cast<int>(i % static_cast<size_t>(width)));
      if (!identical(out[i], want)) {
        ++failures;
        ADD_FAILURE() << cxx << " " << tag << " " << op.name << "(" << in.x[i] << ", " << in.y[i]
                      << ", " << in.c[i] << ") = " << out[i] << ", want " << want;
      }
    }
  }
  std::vector<std::string> math = unary_math_functions();
  for (const std::string& f : binary_math_functions()) math.push_back(f);
  for (const std::string& name : math) {
    auto f = function<OpFunction>(module, fmt::format("kiln_t_{}_{}", tag, name));
    std::vector<T> out(n);
    f(in.x.data(), in.y.data(), in.c.get(), out.data(), in.n);
    int failures = 0;
    for (size_t i = 0; i < n && failures < 5; ++i) {
      const long double exact = libm(name, in.x[i], in.y[i]);
      const T want = static_cast<T>(exact);
      // SLEEF's pow overflows within an ulp of the largest value (pow(max, 1) is inf).
      const bool at_overflow = name == "pow" && std::abs(exact) > std::numeric_limits<T>::max() / 2;
      // float32 calls SLEEF's 3.5-ulp variants where they exist (4 ulp after rounding).
      const int64_t allowed = std::is_same_v<T, float> ? 4 : 2;
      if (!close_enough(out[i], want, allowed) && !(at_overflow && std::isinf(out[i]))) {
        ++failures;
        ADD_FAILURE() << cxx << " " << tag << " " << name << "(" << in.x[i] << ", " << in.y[i]
                      << ") = " << out[i] << ", want " << want << " (" << ulps(out[i], want)
                      << " ulps)";
      }
    }
  }
  // Horizontal reductions: tree order, in double for sums and products.
  using ReduceFunction = void (*)(const T*, int64_t, double*, double*, T*, T*);
  const int64_t chunks = in.n / width;
  std::vector<double> sum(static_cast<size_t>(chunks)), prod(sum.size());
  std::vector<T> max(sum.size()), min(sum.size());
  function<ReduceFunction>(module, fmt::format("kiln_t_{}_reduce", tag))(
      in.x.data(), chunks, sum.data(), prod.data(), max.data(), min.data());
  for (size_t c = 0; c < sum.size(); ++c) {
    std::vector<double> s(static_cast<size_t>(width)), p(s.size());
    std::vector<T> hi(s.size()), lo(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      const T v = in.x[c * s.size() + i];
      s[i] = p[i] = v;
      hi[i] = lo[i] = v;
    }
    for (size_t w = s.size() / 2; w > 0; w /= 2) {
      for (size_t i = 0; i < w; ++i) {
        s[i] += s[i + w];
        p[i] *= p[i + w];
        hi[i] = kiln_maximum(hi[i], hi[i + w]);
        lo[i] = kiln_minimum(lo[i], lo[i + w]);
      }
    }
    EXPECT_TRUE(identical(sum[c], s[0])) << cxx << " " << tag << " chunk " << c;
    EXPECT_TRUE(identical(prod[c], p[0])) << cxx << " " << tag << " chunk " << c;
    EXPECT_TRUE(identical(max[c], hi[0])) << cxx << " " << tag << " chunk " << c;
    EXPECT_TRUE(identical(min[c], lo[0])) << cxx << " " << tag << " chunk " << c;
  }
}

TEST(Vectorize, PreludeOpsMatchTheScalarSemanticsWithEveryCompiler) {
  for (const std::string& cxx : compilers()) {
    SCOPED_TRACE(cxx);
    const auto module = compile(op_test_source(), cxx);
    check_ops<float>(*module, "f", cxx);
    check_ops<double>(*module, "d", cxx);
  }
}

// float sin and cos inline (vec_fast_math.h): the arguments hardest for their range reduction,
// the floats nearest each multiple of pi/2 up to 8192 and their neighbours, then a vector that
// also holds a larger argument (SLEEF's path) and special values; within 4 ulp of long double.
TEST(Vectorize, InlineSinAndCosStayAccurateNearMultiplesOfHalfPi) {
  const std::string source = std::string(kOpHarness) + R"(
extern "C" void kiln_t_sincos(const float* x, float* s, float* c, int64_t n) {
  for (int64_t i = 0; i < n; i += VecF::size) {
    const int64_t k = std::min<int64_t>(VecF::size, n - i);
    VecF vs, vc;
    vec_sincos(kiln_t_load<VecF>(x + i, k), vs, vc);
    kiln_t_store(vs, s + i, k);
    kiln_t_store(vc, c + i, k);
  }
}
)";
  std::vector<float> x;
  for (int q = 0; q <= 5215; ++q) {
    const float nearest = static_cast<float>(q * (std::numbers::pi_v<long double> / 2));
    x.push_back(nearest);
    x.push_back(std::nextafter(nearest, 0.0f));
    x.push_back(std::nextafter(nearest, 10000.0f));
    x.push_back(-nearest);
  }
  for (float v : {1e5f, 3.0f, -0.0f, 0.0f, 1e-30f, -2.5e-8f, 8192.0f, 8192.5f, 1e30f, -7e20f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min()}) {
    x.push_back(v);
  }
  const auto module = compile(source, "g++");
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> s(x.size()), c(x.size());
  function<void (*)(const float*, float*, float*, int64_t)>(*module, "kiln_t_sincos")(
      x.data(), s.data(), c.data(), n);
  int failures = 0;
  for (size_t i = 0; i < x.size() && failures < 10; ++i) {
    const long double a = x[i];
    const float want_s = static_cast<float>(std::sin(a)), want_c = static_cast<float>(std::cos(a));
    const bool ok = close_enough(s[i], want_s, 4) && close_enough(c[i], want_c, 4) &&
                    (std::isnan(want_s) || std::signbit(s[i]) == std::signbit(want_s));
    if (!ok) {
      ++failures;
      ADD_FAILURE() << "sincos(" << x[i] << ") = " << s[i] << ", " << c[i] << "; want " << want_s
                    << ", " << want_c << " (" << ulps(s[i], want_s) << ", " << ulps(c[i], want_c)
                    << " ulps)";
    }
  }
}

// bfloat16 and float16 in generated code: the scalar prelude's conversions (kiln_bf16, kiln_half)
// and the vector loads and stores (F16C's where compiled for it) give kiln's own conversions
// (core/half.h) bit for bit: every 16-bit pattern widened, and floats narrowed to nearest even
// (halfway cases, overflow, subnormals, signed zeros, infinities; NaN stays NaN), vec_round_to
// the same values kept in float lanes.
TEST(Vectorize, SixteenBitConversionsMatchKilnsWithEveryCompiler) {
  const std::string source = std::string(kOpHarness) + R"(
template <typename H> void kiln_t_narrow(const float* x, H* scalar, H* vector, float* rounded,
                                         int64_t n) {
  for (int64_t i = 0; i < n; ++i) scalar[i] = H(x[i]);
  for (int64_t i = 0; i < n; i += VecF::size) {
    VecF::load(x + i).store(vector + i);
    vec_round_to<H>(VecF::load(x + i)).store(rounded + i);
  }
}
template <typename H> void kiln_t_widen(const H* h, float* scalar, float* vector, int64_t n) {
  for (int64_t i = 0; i < n; ++i) scalar[i] = h[i];
  for (int64_t i = 0; i < n; i += VecF::size) VecF::load(h + i).store(vector + i);
}
extern "C" void kiln_t_narrow_bf16(const float* x, kiln_bf16* s, kiln_bf16* v, float* r, int64_t n) {
  kiln_t_narrow(x, s, v, r, n);
}
extern "C" void kiln_t_narrow_half(const float* x, kiln_half* s, kiln_half* v, float* r, int64_t n) {
  kiln_t_narrow(x, s, v, r, n);
}
extern "C" void kiln_t_widen_bf16(const kiln_bf16* h, float* s, float* v, int64_t n) {
  kiln_t_widen(h, s, v, n);
}
extern "C" void kiln_t_widen_half(const kiln_half* h, float* s, float* v, int64_t n) {
  kiln_t_widen(h, s, v, n);
}
)";
  const float inf = std::numeric_limits<float>::infinity();
  // Floats to narrow: special values, each 16-bit value's neighbourhood (halfway points between
  // neighbours, one float either side of them), then random bit patterns.
  std::vector<float> x = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          1e-8f,
                          -3e-8f,
                          6.1e-5f,
                          5.96e-8f,
                          2.98e-8f,
                          1e38f,
                          -3.4e38f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min()};
  for (uint32_t h = 0; h < 0x10000; h += 37) {
    const float bf = std::bit_cast<float>(h << 16), bf_next = std::bit_cast<float>((h + 1) << 16);
    const float halfway = bf + (bf_next - bf) / 2;
    for (float v : {halfway, std::nextafter(halfway, 0.0f), std::nextafter(halfway, inf)}) {
      x.push_back(v);
    }
    const float hf = detail::half_bits_to_float(static_cast<uint16_t>(h));
    const float hf_next = detail::half_bits_to_float(static_cast<uint16_t>(h + 1));
    const float half_halfway = hf + (hf_next - hf) / 2;
    for (float v :
         {half_halfway, std::nextafter(half_halfway, 0.0f), std::nextafter(half_halfway, inf)}) {
      x.push_back(v);
    }
  }
  std::mt19937 bits(7);
  for (int i = 0; i < 4096; ++i) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits())));
  while (x.size() % 64 != 0) x.push_back(0.5f);
  const auto n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> patterns(0x10000);
  for (uint32_t h = 0; h < 0x10000; ++h) patterns[h] = static_cast<uint16_t>(h);
  const auto same_value = [](float a, float b) {
    return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  };
  using Narrow = void (*)(const float*, uint16_t*, uint16_t*, float*, int64_t);
  using Widen = void (*)(const uint16_t*, float*, float*, int64_t);
  for (const std::string& cxx : compilers()) {
    SCOPED_TRACE(cxx);
    const auto module = compile(source, cxx);
    for (const bool bf16 : {true, false}) {
      SCOPED_TRACE(bf16 ? "bfloat16" : "float16");
      const auto widen_bits = [bf16](uint16_t h) {
        return bf16 ? detail::bfloat16_bits_to_float(h) : detail::half_bits_to_float(h);
      };
      std::vector<uint16_t> scalar(x.size()), vector(x.size());
      std::vector<float> rounded(x.size());
      function<Narrow>(*module, bf16 ? "kiln_t_narrow_bf16" : "kiln_t_narrow_half")(
          x.data(), scalar.data(), vector.data(), rounded.data(), n);
      int failures = 0;
      for (size_t i = 0; i < x.size() && failures < 5; ++i) {
        const uint16_t want =
            bf16 ? detail::float_to_bfloat16_bits(x[i]) : detail::float_to_half_bits(x[i]);
        const bool nan = std::isnan(x[i]);
        const bool ok = nan ? std::isnan(widen_bits(scalar[i])) && std::isnan(widen_bits(vector[i]))
                            : scalar[i] == want && vector[i] == want;
        if (!ok || !same_value(rounded[i], widen_bits(want))) {
          ++failures;
          ADD_FAILURE() << std::hexfloat << x[i] << ": scalar " << std::hex << scalar[i]
                        << ", vector " << vector[i] << ", want " << want << "; in float lanes "
                        << rounded[i];
        }
      }
      std::vector<float> wide_scalar(patterns.size()), wide_vector(patterns.size());
      function<Widen>(*module, bf16 ? "kiln_t_widen_bf16" : "kiln_t_widen_half")(
          patterns.data(), wide_scalar.data(), wide_vector.data(),
          static_cast<int64_t>(patterns.size()));
      failures = 0;
      for (size_t h = 0; h < patterns.size() && failures < 5; ++h) {
        const float want = widen_bits(patterns[h]);
        if (!same_value(wide_scalar[h], want) || !same_value(wide_vector[h], want)) {
          ++failures;
          ADD_FAILURE() << std::hex << h << ": scalar " << std::hexfloat << wide_scalar[h]
                        << ", vector " << wide_vector[h] << ", want " << want;
        }
      }
    }
  }
}

TEST(Vectorize, WidthsFollowTheInstructionSet) {
  const auto module = compile(op_test_source(), "g++");
  const int f = function<int (*)()>(*module, "kiln_t_width_float")();
  const int d = function<int (*)()>(*module, "kiln_t_width_double")();
  EXPECT_EQ(f, 2 * d);
  EXPECT_TRUE(f == 4 || f == 8 || f == 16) << f;
}

// --- the loop writer ---------------------------------------------------------------------------

constexpr DType F32 = DType::Float32, F64 = DType::Float64, Bool = DType::Bool;
constexpr int64_t kRowStride = 128, kRows = 3;

// Loop variables: i0 the rows, i1 the inner loop over [0, n).
InnerLoop inner_loop() { return {{"i0", "i1"}, 1, "0", "n", "    "}; }
Index element() { return var(0) * kRowStride + var(1); }
Expr x_of(DType d = F32) { return load(0, element(), d); }
Expr row_value() { return load(1, var(0), F32); }  // invariant along i1
Expr flag() { return load(2, element(), Bool); }
Expr number(double v, DType d = F32) { return constant_of(v, d); }
Expr op(const std::string& name, std::vector<Expr> args, DType d = F32) {
  return call(name, std::move(args), d);
}

// The caller's scalar tail: `statement` per element, counting the elements it covers.
ScalarTail tail_of(const std::string& statement) {
  return [statement](const std::string& begin) {
    return fmt::format(
        "    for (int64_t i1 = {}; i1 < n; ++i1) {{\n      {}\n      ++*tail;\n    }}\n", begin,
        statement);
  };
}

// f(b0, b1, b2, b3, rows, n, tail): rows of the pointwise loop.
std::string pointwise_harness(const std::string& name, const std::string& t,
                              const std::string& out_t, const std::string& loop) {
  return fmt::format(
      "extern \"C\" void {0}(const {1}* __restrict b0, [[maybe_unused]] const float* __restrict "
      "b1, [[maybe_unused]] const bool* "
      "__restrict b2, {2}* __restrict b3, int64_t rows, int64_t n, int64_t* tail) {{\n"
      "  for (int64_t i0 = 0; i0 < rows; ++i0) {{\n{3}  }}\n}}\n",
      name, t, out_t, loop);
}

// f(b0, out, rows, n, tail): one reduction per row into out[row].
std::string reduction_harness(const std::string& name, const std::string& t,
                              const std::string& acc_t, const std::string& init,
                              const std::string& loop) {
  return fmt::format(
      "extern \"C\" void {0}(const {1}* __restrict b0, {2}* out, int64_t rows, int64_t n, "
      "int64_t* tail) {{\n  for (int64_t i0 = 0; i0 < rows; ++i0) {{\n    {2} acc = {3};\n{4}"
      "    out[i0] = acc;\n  }}\n}}\n",
      name, t, acc_t, init, loop);
}

std::string store_loop(const Expr& body, DType out, const std::string& statement) {
  auto text = vectorized_store_loop(inner_loop(), body, 3, out, element(), tail_of(statement));
  EXPECT_TRUE(text.has_value());
  return text.value_or("");
}
std::string reduction_loop(const Expr& body, const std::string& reduction, const std::string& acc_t,
                           const std::string& statement, bool wide = false) {
  InnerLoop loop = inner_loop();
  loop.wide_float_accumulation = wide;
  auto text = vectorized_reduction_loop(loop, body, reduction, "acc", acc_t, tail_of(statement));
  EXPECT_TRUE(text.has_value());
  return text.value_or("");
}

// The bodies under test, by harness function name.
Expr where_exp_body() {  // x > 0 ? exp(x) * y + 2 : maximum(x, y)
  const Expr x = x_of();
  return op("where", {op("gt", {x, number(0)}, Bool),
                      op("add", {op("mul", {op("exp", {x}), row_value()}), number(2)}),
                      op("maximum", {x, row_value()})});
}
Expr logical_body() {  // x < y || (c && !(x > 1))
  const Expr x = x_of();
  return op("bitwise_or",
            {op("lt", {x, row_value()}, Bool),
             op("bitwise_and", {flag(), op("bitwise_not", {op("gt", {x, number(1)}, Bool)}, Bool)},
                Bool)},
            Bool);
}
// (float(c) + float(bool(x))) * sqrt(|x|) + (round(x) + float(0.25 as a float64 constant))
Expr casts_body() {
  const Expr x = x_of();
  return op("add", {op("mul", {op("add", {cast(flag(), F32), cast(cast(x, Bool), F32)}),
                               op("sqrt", {op("abs", {x})})}),
                    op("add", {op("round", {x}), cast(number(0.25, F64), F32)})});
}
Expr double_body() {  // pow(x, 2) + div_floor(x, 3) + 3 (an integer constant)
  const Expr x = x_of(F64);
  return op(
      "add",
      {op("add", {op("pow", {x, number(2, F64)}, F64), op("div_floor", {x, number(3, F64)}, F64)},
          F64),
       cast(integer_constant(3, DType::Int64), F64)},
      F64);
}

Expr sincos_body() {  // sin(x) * cos(x) + cos(x): one sincos
  const Expr x = x_of();
  return op("add", {op("mul", {op("sin", {x}), op("cos", {x})}), op("cos", {x})});
}
Expr sincos_double_body() {  // cos(x) - sin(x), cos first
  const Expr x = x_of(F64);
  return op("sub", {op("cos", {x}, F64), op("sin", {x}, F64)}, F64);
}

std::string writer_test_source() {
  const std::string at = "i0 * 128L + i1";
  std::string s;
  s += pointwise_harness(
      "kiln_w_where_exp", "float", "float",
      store_loop(where_exp_body(), F32,
                 fmt::format("const float x = b0[{0}]; b3[{0}] = x > 0.f ? expf(x) * b1[i0] + 2.f "
                             ": kiln_maximum<float>(x, b1[i0]);",
                             at)));
  s += pointwise_harness(
      "kiln_w_logical", "float", "bool",
      store_loop(logical_body(), Bool,
                 fmt::format("const float x = b0[{0}]; b3[{0}] = (x < b1[i0]) || (b2[{0}] && !(x > "
                             "1.f));",
                             at)));
  s += pointwise_harness(
      "kiln_w_casts", "float", "float",
      store_loop(
          casts_body(), F32,
          fmt::format("const float x = b0[{0}]; b3[{0}] = (float(b2[{0}]) + float(x != 0.f)) * "
                      "std::sqrt(std::abs(x)) + (std::nearbyint(x) + 0.25f);",
                      at)));
  s += pointwise_harness(
      "kiln_w_double", "double", "double",
      store_loop(
          double_body(), F64,
          fmt::format("const double x = b0[{0}]; b3[{0}] = pow(x, 2.0) + std::floor(x / 3.0) + "
                      "3.0;",
                      at)));
  s += pointwise_harness(
      "kiln_w_sincos", "float", "float",
      store_loop(
          sincos_body(), F32,
          fmt::format("const float x = b0[{0}]; b3[{0}] = sinf(x) * cosf(x) + cosf(x);", at)));
  s += pointwise_harness(
      "kiln_w_sincos_double", "double", "double",
      store_loop(sincos_double_body(), F64,
                 fmt::format("const double x = b0[{0}]; b3[{0}] = cos(x) - sin(x);", at)));
  s += reduction_harness(
      "kiln_w_sum", "float", "double", "0.0",
      reduction_loop(op("mul", {x_of(), x_of()}), "sum", "double",
                     fmt::format("acc += static_cast<double>(b0[{0}] * b0[{0}]);", at)));
  s += reduction_harness(
      "kiln_w_sum_wide", "float", "double", "0.0",
      reduction_loop(op("mul", {x_of(), x_of()}), "sum", "double",
                     fmt::format("acc += static_cast<double>(b0[{0}] * b0[{0}]);", at), true));
  // (A division, not a multiplication: g++ fuses multiply-adds, even across statements.)
  s += reduction_harness(
      "kiln_w_prod_wide", "float", "double", "1.0",
      reduction_loop(op("add", {op("div", {x_of(), number(100)}), number(1)}), "prod", "double",
                     fmt::format("acc *= static_cast<double>(b0[{0}] / 100.f + 1.f);", at), true));
  s +=
      reduction_harness("kiln_w_max", "float", "float", "-std::numeric_limits<float>::infinity()",
                        reduction_loop(x_of(), "max", "float",
                                       fmt::format("acc = kiln_maximum<float>(acc, b0[{}]);", at)));
  s += reduction_harness(
      "kiln_w_min", "float", "float", "std::numeric_limits<float>::infinity()",
      reduction_loop(op("neg", {x_of()}), "min", "float",
                     fmt::format("acc = kiln_minimum<float>(acc, -b0[{}]);", at)));
  s += reduction_harness(
      "kiln_w_prod", "double", "double", "1.0",
      reduction_loop(
          op("add", {op("mul", {x_of(F64), number(0.01, F64)}, F64), number(1, F64)}, F64), "prod",
          "double", fmt::format("acc *= b0[{}] * 0.01 + 1.0;", at)));
  s += "extern \"C\" int kiln_w_width_float() { return kiln_vec_width_float; }\n";
  s += "extern \"C\" int kiln_w_width_double() { return kiln_vec_width_double; }\n";
  return s;
}

// Row-major inputs of kRows rows, with a NaN, an infinity and signed zeros among random values.
struct WriterInputs {
  std::vector<float> x, y;
  std::vector<double> xd;
  std::unique_ptr<bool[]> c;
};

WriterInputs writer_inputs() {
  WriterInputs in;
  const size_t size = kRows * kRowStride;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-3, 3);
  for (size_t i = 0; i < size; ++i) in.x.push_back(uniform(rng));
  in.x[kRowStride + 3] = std::numeric_limits<float>::quiet_NaN();
  in.x[2 * kRowStride + 7] = -std::numeric_limits<float>::infinity();
  in.x[2] = -0.0f;
  in.x[20] = 0.0f;
  in.x[21] = 2.5f;
  for (float v : in.x) in.xd.push_back(static_cast<double>(v) * 1.5);
  for (int64_t r = 0; r < kRows; ++r) in.y.push_back(uniform(rng));
  in.c = std::make_unique<bool[]>(size);
  for (size_t i = 0; i < size; ++i) in.c[i] = rng() % 3 == 0;
  return in;
}

bool near(double got, double want, double tolerance) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  return std::abs(got - want) <= tolerance * (1 + std::abs(want));
}

// Runs the written loops of writer_test_source() for several lengths.
void check_written_loops(const LoadedModule& module) {
  const WriterInputs in = writer_inputs();
  const int64_t wf = function<int (*)()>(module, "kiln_w_width_float")();
  const int64_t wd = function<int (*)()>(module, "kiln_w_width_double")();
  using FloatPointwise =
      void (*)(const float*, const float*, const bool*, void*, int64_t, int64_t, int64_t*);
  using DoublePointwise =
      void (*)(const double*, const float*, const bool*, double*, int64_t, int64_t, int64_t*);
  for (int64_t n : {0, 1, 5, 16, 37, 100}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const size_t size = kRows * kRowStride;
    auto each = [&](auto check) {
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t j = 0; j < n; ++j)
          check(static_cast<size_t>(r), static_cast<size_t>(r * kRowStride + j));
      }
    };
    // A float pointwise loop of writer_test_source() against want(row, i) in double.
    const auto check_float = [&](const std::string& name, const auto& want_of, double tolerance) {
      std::vector<float> out(size);
      int64_t tail = 0;
      function<FloatPointwise>(module, "kiln_w_" + name)(in.x.data(), in.y.data(), in.c.get(),
                                                         out.data(), kRows, n, &tail);
      EXPECT_EQ(tail, kRows * (n % wf));
      each([&](size_t r, size_t i) {
        const double want = want_of(r, i);
        EXPECT_TRUE(near(out[i], want, tolerance))
            << name << " " << i << ": " << out[i] << " vs " << want;
      });
    };
    check_float(
        "where_exp",
        [&](size_t r, size_t i) {
          const double x = in.x[i], y = in.y[r];
          return x > 0 ? std::exp(x) * y + 2 : kiln_maximum(x, y);
        },
        1e-5);
    check_float(
        "sincos",
        [&](size_t, size_t i) {
          const double x = in.x[i];
          return std::sin(x) * std::cos(x) + std::cos(x);
        },
        1e-6);
    {
      std::vector<double> out(size);
      int64_t tail = 0;
      function<DoublePointwise>(module, "kiln_w_sincos_double")(
          in.xd.data(), in.y.data(), in.c.get(), out.data(), kRows, n, &tail);
      EXPECT_EQ(tail, kRows * (n % wd));
      each([&](size_t, size_t i) {
        const long double x = in.xd[i];
        const double want = static_cast<double>(std::cos(x) - std::sin(x));
        EXPECT_TRUE(near(out[i], want, 1e-14))
            << "sincos double " << i << ": " << out[i] << " vs " << want;
      });
    }
    {
      std::unique_ptr<bool[]> out = std::make_unique<bool[]>(size);
      int64_t tail = 0;
      function<FloatPointwise>(module, "kiln_w_logical")(in.x.data(), in.y.data(), in.c.get(),
                                                         out.get(), kRows, n, &tail);
      EXPECT_EQ(tail, kRows * (n % wf));
      each([&](size_t r, size_t i) {
        const bool want = in.x[i] < in.y[r] || (in.c[i] && !(in.x[i] > 1));
        unsigned char byte = 0;
        std::memcpy(&byte, &out[i], 1);
        EXPECT_EQ(byte, want ? 1 : 0) << "logical " << i;
      });
    }
    check_float(
        "casts",
        [&](size_t, size_t i) {
          const double x = in.x[i];
          return (double(in.c[i]) + double(x != 0)) * std::sqrt(std::abs(x)) + std::nearbyint(x) +
                 0.25;
        },
        1e-6);
    {
      std::vector<double> out(size);
      int64_t tail = 0;
      function<DoublePointwise>(module, "kiln_w_double")(in.xd.data(), in.y.data(), in.c.get(),
                                                         out.data(), kRows, n, &tail);
      EXPECT_EQ(tail, kRows * (n % wd));
      each([&](size_t, size_t i) {
        const double x = in.xd[i];
        const double want = x * x + std::floor(x / 3) + 3;
        EXPECT_TRUE(near(out[i], want, 1e-14))
            << "double " << i << ": " << out[i] << " vs " << want;
      });
    }
    // Reductions, one per row; float lanes accumulate in float.
    auto reduce = [&](const char* name, auto* out, const auto* x, int64_t width) {
      int64_t tail = 0;
      function<void (*)(decltype(x), decltype(out), int64_t, int64_t, int64_t*)>(module, name)(
          x, out, kRows, n, &tail);
      EXPECT_EQ(tail, kRows * (n % width)) << name;
    };
    double sum[kRows], prod[kRows], sum_wide[kRows], prod_wide[kRows];
    float max[kRows], min[kRows];
    reduce("kiln_w_sum", sum, in.x.data(), wf);
    reduce("kiln_w_max", max, in.x.data(), wf);
    reduce("kiln_w_min", min, in.x.data(), wf);
    reduce("kiln_w_prod", prod, in.xd.data(), wd);
    reduce("kiln_w_sum_wide", sum_wide, in.x.data(), wf);
    reduce("kiln_w_prod_wide", prod_wide, in.x.data(), wf);
    for (int64_t r = 0; r < kRows; ++r) {
      double s = 0, p = 1, s_wide = 0, p_wide = 1;
      float hi = -std::numeric_limits<float>::infinity(),
            lo = std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < n; ++j) {
        const size_t i = static_cast<size_t>(r * kRowStride + j);
        s += double(in.x[i]) * in.x[i];
        p *= in.xd[i] * 0.01 + 1;
        // Float values accumulated in double, as the scalar loop does.
        s_wide += double(in.x[i] * in.x[i]);
        p_wide *= double(in.x[i] / 100.f + 1.f);
        hi = kiln_maximum(hi, in.x[i]);
        lo = kiln_minimum(lo, -in.x[i]);
      }
      EXPECT_TRUE(near(sum[r], s, 1e-6)) << "sum row " << r << ": " << sum[r] << " vs " << s;
      EXPECT_TRUE(near(prod[r], p, 1e-14)) << "prod row " << r << ": " << prod[r] << " vs " << p;
      EXPECT_TRUE(near(sum_wide[r], s_wide, 1e-13))
          << "wide sum row " << r << ": " << sum_wide[r] - s_wide;
      EXPECT_TRUE(near(prod_wide[r], p_wide, 1e-13))
          << "wide prod row " << r << ": " << prod_wide[r] - p_wide;
      EXPECT_TRUE(identical(max[r], hi) || (max[r] == 0 && hi == 0)) << "max row " << r;
      EXPECT_TRUE(identical(min[r], lo) || (min[r] == 0 && lo == 0)) << "min row " << r;
    }
  }
}

TEST(Vectorize, WrittenLoopsComputeTheirBodiesAndLeaveTheRemainderToTheTail) {
  for (const std::string& cxx : compilers()) {
    SCOPED_TRACE(cxx);
    check_written_loops(*compile(writer_test_source(), cxx));
  }
}

TEST(Vectorize, WrittenLoopsLoadContiguouslyAndHoistInvariants) {
  const std::string text = store_loop(where_exp_body(), F32, "");
  EXPECT_NE(text.find("VecF::load(&b0[((i0 * 128L) + i1)])"), std::string::npos) << text;
  EXPECT_NE(text.find("vec_exp("), std::string::npos) << text;
  EXPECT_NE(text.find("vec_maximum("), std::string::npos) << text;
  EXPECT_NE(text.find(".store(&b3[((i0 * 128L) + i1)])"), std::string::npos) << text;
  // The row value is loaded once per row, ahead of the vector loop; the loop steps by the width.
  const size_t broadcast = text.find("VecF::broadcast(b1[i0])");
  const size_t loop = text.find("for (int64_t i1 = ");
  ASSERT_NE(broadcast, std::string::npos) << text;
  EXPECT_LT(broadcast, loop) << text;
  EXPECT_NE(text.find("i1 += kiln_vec_width_float"), std::string::npos) << text;
  EXPECT_NE(store_loop(double_body(), F64, "").find("VecD::load("), std::string::npos);
  const std::string sum = reduction_loop(x_of(), "sum", "double", "");
  EXPECT_NE(sum.find("acc = acc + reduce_add<double>(acc_vec);"), std::string::npos) << sum;
  const std::string wide = reduction_loop(x_of(), "sum", "double", "", true);
  EXPECT_NE(wide.find("vec_widen_high(v0)"), std::string::npos) << wide;
  EXPECT_NE(wide.find("acc = acc + reduce_add<double>(acc_vec_low + acc_vec_high);"),
            std::string::npos)
      << wide;
}

// sin and cos of one value: one sincos call defining both, where the first of them was.
TEST(Vectorize, SinAndCosOfOneValueShareOneSincos) {
  const std::string text = store_loop(sincos_body(), F32, "");
  EXPECT_EQ(text.find("vec_sin("), std::string::npos) << text;
  EXPECT_EQ(text.find("vec_cos("), std::string::npos) << text;
  EXPECT_EQ(text.find("vec_sincos("), text.rfind("vec_sincos(")) << text;  // exactly one
  EXPECT_NE(text.find("vec_sincos("), std::string::npos) << text;
  const std::string lines =
      "  const VecF v0 = VecF::load(&b0[i]);\n"
      "  const VecF v1 = vec_cos(v0);\n"
      "  const VecF v2 = vec_sin(v1);\n"
      "  const VecF v3 = vec_sin(v0);\n"
      "  const VecF v4 = (v2 * v3);\n";
  EXPECT_EQ(pair_sin_cos(lines),
            "  const VecF v0 = VecF::load(&b0[i]);\n"
            "  VecF v3, v1;\n"
            "  vec_sincos(v0, v3, v1);\n"
            "  const VecF v2 = vec_sin(v1);\n"
            "  const VecF v4 = (v2 * v3);\n");
  // Without its partner a sin stays a sin.
  const std::string alone = store_loop(op("sin", {x_of()}), F32, "");
  EXPECT_NE(alone.find("vec_sin("), std::string::npos) << alone;
  EXPECT_EQ(alone.find("vec_sincos("), std::string::npos) << alone;
}

TEST(Vectorize, WhatCannotBeVectorizedIsDeclined) {
  const ScalarTail tail = tail_of("");
  const InnerLoop loop = inner_loop();
  auto store = [&](const Expr& body, DType out = F32, Index at = element()) {
    return vectorized_store_loop(loop, body, 3, out, at, tail);
  };
  // Strided, gathered (floordiv, modulo) and variable-strided loads.
  EXPECT_EQ(store(load(0, var(0) * kRowStride + var(1) * 2, F32)), std::nullopt);
  EXPECT_EQ(store(load(0, floordiv(var(1), constant(2)), F32)), std::nullopt);
  EXPECT_EQ(store(load(0, mod(var(1), constant(4)), F32)), std::nullopt);
  EXPECT_EQ(store(load(0, var(1) * var(0), F32)), std::nullopt);
  // A load invariant along i1 but read under a modulo of another variable still vectorizes.
  EXPECT_NE(store(op("add", {x_of(), load(1, mod(var(0), constant(2)), F32)})), std::nullopt);
  // Integer bodies, index values, mixed float widths, unknown ops.
  EXPECT_EQ(store(load(0, element(), DType::Int64), DType::Int64), std::nullopt);
  EXPECT_EQ(store(cast(load(0, element(), DType::Int32), F32)), std::nullopt);
  EXPECT_EQ(store(cast(index_value(var(1)), F32)), std::nullopt);
  EXPECT_EQ(store(x_of(), F64), std::nullopt);
  EXPECT_EQ(store(op("add", {cast(x_of(), F64), x_of(F64)}, F64), F64), std::nullopt);
  EXPECT_EQ(store(op("sigmoid", {x_of()})), std::nullopt);
  EXPECT_EQ(store(op("bitwise_and", {x_of(), x_of()})), std::nullopt);
  // Stores that are not contiguous along i1.
  EXPECT_EQ(store(x_of(), F32, var(0)), std::nullopt);
  EXPECT_EQ(store(x_of(), F32, var(1) * 2), std::nullopt);
  // Reductions of bools or integers, into integer accumulators, of unknown kinds.
  auto reduction = [&](const Expr& body, const std::string& kind, const std::string& acc_t) {
    return vectorized_reduction_loop(loop, body, kind, "acc", acc_t, tail);
  };
  EXPECT_EQ(reduction(flag(), "sum", "double"), std::nullopt);
  EXPECT_EQ(reduction(load(0, element(), DType::Int64), "sum", "int64_t"), std::nullopt);
  EXPECT_EQ(reduction(x_of(), "sum", "int64_t"), std::nullopt);
  EXPECT_EQ(reduction(x_of(), "argmax", "float"), std::nullopt);
  EXPECT_EQ(reduction(load(0, var(1) * 2, F32), "max", "float"), std::nullopt);
  EXPECT_NE(reduction(x_of(), "max", "float"), std::nullopt);
}

}  // namespace
}  // namespace kiln::inductor
