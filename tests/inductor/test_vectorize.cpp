// The vector type of generated kernels (vec_prelude) and the vector loop writer (vectorize):
// the prelude compiles warning-free with g++ and clang++; every vector op matches the scalar
// semantics over NaN, infinities, signed zeros, out-of-domain and huge inputs and partial chunks
// (exactly, or within 2 ulp for SLEEF's functions); written loops compute their bodies, hand the
// remainder to the scalar tail, and decline what they cannot vectorize.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>

#include "inductor/code_cache.h"
#include "inductor/codegen_cpp.h"
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

// A translation unit as the code generator writes one: its scalar prelude, the vector prelude,
// then `code`.
std::shared_ptr<const LoadedModule> compile(const std::string& code, const std::string& cxx) {
  CompilerConfig config = CompilerConfig::from_environment();
  config.cxx = cxx;
  for (const char* flag : {"-Wall", "-Wextra", "-Werror"}) config.flags.push_back(flag);
  return load_or_compile(generate_cpp(Program{}) + vec_prelude() + code, config,
                         compile_arguments(), "vectorize test");
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
  for (const std::string& f : vec_unary_math()) add(f, fmt::format("vec_{}(a)", f), false);
  for (const std::string& f : vec_binary_math()) add(f, fmt::format("vec_{}(a, b)", f), false);
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
  std::vector<std::string> math = vec_unary_math();
  for (const std::string& f : vec_binary_math()) math.push_back(f);
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
      if (!close_enough(out[i], want, 2) && !(at_overflow && std::isinf(out[i]))) {
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

TEST(Vectorize, WidthsFollowTheInstructionSet) {
  const auto module = compile(op_test_source(), "g++");
  const int f = function<int (*)()>(*module, "kiln_t_width_float")();
  const int d = function<int (*)()>(*module, "kiln_t_width_double")();
  EXPECT_EQ(f, 2 * d);
  EXPECT_TRUE(f == 4 || f == 8 || f == 16) << f;
}

}  // namespace
}  // namespace kiln::inductor
