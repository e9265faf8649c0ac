// Reducers for sum/mean/prod, max/min (with and without indices), var/std (Welford merging of
// two-pass chunks), vector norms, logsumexp and any/all, run by the engine in reduce_engine.h.
#include "ops/reduction/reduce_engine.h"

#include <cmath>
#include <limits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::ReduceKind;
using ops::ReduceParams;
using ops::ReducePlan;

template <typename T>
constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else if constexpr (kIsFloat<T>) {
    return std::isnan(static_cast<float>(v));
  } else {
    return false;
  }
}

// Sum of f(x) over a contiguous run: four SIMD accumulators over blocks of kBlock elements,
// blocks added pairwise, so float32 error grows with log(n) rather than n.
template <typename T, typename VF, typename SF>
T cascade_map_sum(const T* p, int64_t n, const VF& vf, const SF& sf) {
  using V = Vec<T>;
  constexpr int64_t W = V::size;
  constexpr int64_t kBlock = 4 * W * 32;
  if (n > kBlock) {
    const int64_t half = (n / 2 + W - 1) / W * W;
    return cascade_map_sum(p, half, vf, sf) + cascade_map_sum(p + half, n - half, vf, sf);
  }
  V a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    a0 = a0 + vf(V::loadu(p + i));
    a1 = a1 + vf(V::loadu(p + i + W));
    a2 = a2 + vf(V::loadu(p + i + 2 * W));
    a3 = a3 + vf(V::loadu(p + i + 3 * W));
  }
  for (; i + W <= n; i += W) a0 = a0 + vf(V::loadu(p + i));
  T s = reduce_add<T>((a0 + a1) + (a2 + a3));
  T tail = T(0);
  for (; i < n; ++i) tail += sf(p[i]);
  return s + tail;
}

template <typename T>
T cascade_sum(const T* p, int64_t n) {
  return cascade_map_sum(
      p, n, [](Vec<T> v) { return v; }, [](T x) { return x; });
}

// The maximum of a contiguous run of n >= 1 elements; NaN if any element is NaN.
template <typename T>
T simd_max(const T* p, int64_t n) {
  using V = Vec<T>;
  constexpr int64_t W = V::size;
  int64_t i = 0;
  T m = p[0];
  if (n >= W) {
    V v = V::loadu(p);
    for (i = W; i + W <= n; i += W) v = maximum(v, V::loadu(p + i));
    for (int k = 0; k < W; ++k) m = (v[k] != v[k] || v[k] > m) ? v[k] : m;
  }
  for (; i < n; ++i) {
    if (m != m) break;
    m = (p[i] != p[i] || p[i] > m) ? p[i] : m;
  }
  return m;
}

// ---- sum, mean, prod (T: float, double, int64) ----

template <typename T>
struct SumReducer {
  using acc_t = T;
  static constexpr bool kAcross = true;
  static constexpr bool kCascade = std::is_floating_point_v<T>;
  T* out;
  double divisor;  // 1 for sum, n for mean
  acc_t identity() const { return T(0); }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t) const {
    if (s == 1 && n >= Vec<T>::size) {
      a += cascade_sum(p, n);
    } else {
      T t = T(0);
      for (int64_t i = 0; i < n; ++i) t += p[i * s];
      a += t;
    }
  }
  void across(acc_t* acc, const T* p, int64_t m, int64_t) const {
    using V = Vec<T>;
    int64_t k = 0;
    for (; k + V::size <= m; k += V::size) {
      (V::loadu(acc + k) + V::loadu(p + k)).storeu(acc + k);
    }
    for (; k < m; ++k) acc[k] += p[k];
  }
  void merge(acc_t& a, const acc_t& b) const { a += b; }
  void write(int64_t o, int64_t, const acc_t& a) const {
    out[o] = divisor == 1.0 ? a : static_cast<T>(static_cast<double>(a) / divisor);
  }
};

template <typename T>
struct ProdReducer {
  using acc_t = T;
  T* out;
  acc_t identity() const { return T(1); }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t) const {
    int64_t i = 0;
    if (s == 1) {
      using V = Vec<T>;
      constexpr int64_t W = V::size;
      V p0(T(1)), p1(T(1));
      for (; i + 2 * W <= n; i += 2 * W) {
        p0 = p0 * V::loadu(p + i);
        p1 = p1 * V::loadu(p + i + W);
      }
      const V v = p0 * p1;
      for (int k = 0; k < W; ++k) a *= v[k];
    }
    for (; i < n; ++i) a *= p[i * s];
  }
  void merge(acc_t& a, const acc_t& b) const { a *= b; }
  void write(int64_t o, int64_t, const acc_t& a) const { out[o] = a; }
};

// ---- max/min without indices (any dtype); NaN propagates ----

template <typename T, bool IsMax>
struct ExtremeReducer {
  using acc_t = T;
  static constexpr bool kAcross = kVectorizable<T>;
  static constexpr bool kCascade = false;
  T* out;
  acc_t identity() const {
    if constexpr (std::is_same_v<T, bool>) {
      return !IsMax;
    } else if constexpr (kIsFloat<T>) {
      return T(IsMax ? -std::numeric_limits<float>::infinity()
                     : std::numeric_limits<float>::infinity());
    } else {
      return IsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static T pick(T a, T b) {
    if constexpr (std::is_floating_point_v<T> || std::is_integral_v<T>) {
      // Branch-free select (maxss/cmov); a data-dependent branch mispredicts on random data.
      const T m = IsMax ? std::max(a, b) : std::min(a, b);
      if constexpr (std::is_floating_point_v<T>) {
        if (a != a || b != b) [[unlikely]]
          return a + b;  // NaN
      }
      return m;
    }
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if constexpr (IsMax) {
      return static_cast<opmath_t<T>>(b) > static_cast<opmath_t<T>>(a) ? b : a;
    } else {
      return static_cast<opmath_t<T>>(b) < static_cast<opmath_t<T>>(a) ? b : a;
    }
  }
  static Vec<T> vpick(Vec<T> a, Vec<T> b) {
    if constexpr (IsMax) {
      return maximum(a, b);
    } else {
      return minimum(a, b);
    }
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t) const {
    int64_t i = 0;
    if constexpr (kVectorizable<T>) {
      using V = Vec<T>;
      constexpr int64_t W = V::size;
      if (s == 1 && n >= 4 * W) {
        V v0 = V::loadu(p), v1 = V::loadu(p + W), v2 = V::loadu(p + 2 * W),
          v3 = V::loadu(p + 3 * W);
        for (i = 4 * W; i + 4 * W <= n; i += 4 * W) {
          v0 = vpick(v0, V::loadu(p + i));
          v1 = vpick(v1, V::loadu(p + i + W));
          v2 = vpick(v2, V::loadu(p + i + 2 * W));
          v3 = vpick(v3, V::loadu(p + i + 3 * W));
        }
        V v = vpick(vpick(v0, v1), vpick(v2, v3));
        for (int k = 0; k < W; ++k) a = pick(a, v[k]);
      }
    }
    for (; i < n; ++i) a = pick(a, p[i * s]);
  }
  void across(acc_t* acc, const T* p, int64_t m, int64_t) const {
    if constexpr (kVectorizable<T>) {
      using V = Vec<T>;
      int64_t k = 0;
      for (; k + V::size <= m; k += V::size) {
        vpick(V::loadu(acc + k), V::loadu(p + k)).storeu(acc + k);
      }
      for (; k < m; ++k) acc[k] = pick(acc[k], p[k]);
    }
  }
  void merge(acc_t& a, const acc_t& b) const { a = pick(a, b); }
  void write(int64_t o, int64_t, const acc_t& a) const { out[o] = a; }
};

// ---- max/min with the index of the first extreme (NaN counts as the extreme) ----

template <typename T>
struct ValueIndex {
  T value;
  int64_t index;
};

template <typename T, bool IsMax>
struct ArgReducer {
  using acc_t = ValueIndex<T>;
  static constexpr bool kAcross = true;
  static constexpr bool kCascade = false;
  T* values;  // may be null
  int64_t* indices;
  acc_t identity() const { return {T{}, -1}; }
  // Whether x strictly beats v (ties keep the earlier element).
  static bool beats(T x, T v) {
    if (is_nan(v)) return false;
    if (is_nan(x)) return true;
    if constexpr (IsMax) {
      return static_cast<opmath_t<T>>(x) > static_cast<opmath_t<T>>(v);
    } else {
      return static_cast<opmath_t<T>>(x) < static_cast<opmath_t<T>>(v);
    }
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t idx) const {
    int64_t i = 0;
    if (a.index < 0 && n > 0) {
      a = {p[0], idx};
      i = 1;
    }
    for (; i < n; ++i) {
      const T x = p[i * s];
      if (beats(x, a.value)) a = {x, idx + i};
    }
  }
  // Rows arrive in increasing index order, so a tie keeps the earlier row.
  void across(acc_t* acc, const T* p, int64_t m, int64_t index) const {
    for (int64_t k = 0; k < m; ++k) {
      if (acc[k].index < 0 || beats(p[k], acc[k].value)) acc[k] = {p[k], index};
    }
  }
  void merge(acc_t& a, const acc_t& b) const {
    if (b.index >= 0 && (a.index < 0 || beats(b.value, a.value))) a = b;
  }
  void write(int64_t o0, int64_t o1, const acc_t& a) const {
    if (values) values[o0] = a.value;
    indices[o1] = a.index;
  }
};

// ---- var/std: per run, an exact two-pass mean and M2 in double, merged by Chan's formula ----

struct Moments {
  double mean = 0, m2 = 0;
  int64_t n = 0;
};

inline void merge_moments(Moments& a, const Moments& b) {
  if (b.n == 0) return;
  if (a.n == 0) {
    a = b;
    return;
  }
  const double n = static_cast<double>(a.n + b.n);
  const double delta = b.mean - a.mean;
  a.mean += delta * static_cast<double>(b.n) / n;
  a.m2 += b.m2 + delta * delta * static_cast<double>(a.n) * static_cast<double>(b.n) / n;
  a.n += b.n;
}

template <typename T>
struct VarReducer {
  using acc_t = Moments;
  static constexpr bool kAcross = true;
  static constexpr bool kCascade = false;
  T* var;
  T* mean;  // may be null
  double correction;
  bool take_sqrt;
  acc_t identity() const { return {}; }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t) const {
    constexpr int64_t kChunk = 4096;
    for (int64_t c = 0; c < n; c += kChunk) {
      const int64_t len = std::min(kChunk, n - c);
      const T* q = p + c * s;
      Moments m;
      m.n = len;
      if (s == 1) {
        // Shift by the chunk's mean (rounded to T), then correct for the rounding exactly:
        // M2 = sum(d^2) - sum(d)^2 / n with d = x - shift.
        const T shift =
            static_cast<T>(static_cast<double>(cascade_sum(q, len)) / static_cast<double>(len));
        const Vec<T> vshift(shift);
        const double s1 = cascade_map_sum(
            q, len, [vshift](Vec<T> x) { return x - vshift; }, [shift](T x) { return x - shift; });
        const double s2 = cascade_map_sum(
            q, len, [vshift](Vec<T> x) { return (x - vshift) * (x - vshift); },
            [shift](T x) { return (x - shift) * (x - shift); });
        m.mean = static_cast<double>(shift) + s1 / static_cast<double>(len);
        m.m2 = std::max(0.0, s2 - s1 * s1 / static_cast<double>(len));
      } else {
        double sum = 0;
        for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(q[i * s]);
        m.mean = sum / static_cast<double>(len);
        for (int64_t i = 0; i < len; ++i) {
          const double d = static_cast<double>(q[i * s]) - m.mean;
          m.m2 += d * d;
        }
      }
      merge_moments(a, m);
    }
  }
  // Welford's update of a block of outputs by one row; every output has seen the same number
  // of rows, so the reciprocal is shared.
  void across(acc_t* acc, const T* p, int64_t m, int64_t) const {
    const int64_t n = acc[0].n + 1;
    const double inv = 1.0 / static_cast<double>(n);
    for (int64_t k = 0; k < m; ++k) {
      const double x = static_cast<double>(p[k]);
      const double d = x - acc[k].mean;
      acc[k].mean += d * inv;
      acc[k].m2 += d * (x - acc[k].mean);
      acc[k].n = n;
    }
  }
  void merge(acc_t& a, const acc_t& b) const { merge_moments(a, b); }
  void write(int64_t o0, int64_t o1, const acc_t& a) const {
    const double divisor = std::max(0.0, static_cast<double>(a.n) - correction);
    double v = a.m2 / divisor;
    if (take_sqrt) v = std::sqrt(v);
    var[o0] = static_cast<T>(v);
    if (mean) {
      mean[o1] = static_cast<T>(a.n == 0 ? std::numeric_limits<double>::quiet_NaN() : a.mean);
    }
  }
};

// ---- vector norms ----

enum class NormMode { Zero, One, Two, Inf, NegInf, General };

template <typename T, NormMode Mode>
struct NormReducer {
  using acc_t = double;
  T* out;
  double ord;
  acc_t identity() const {
    if constexpr (Mode == NormMode::NegInf) return std::numeric_limits<double>::infinity();
    return 0.0;
  }
  void fold(acc_t& a, double x) const {
    const double ax = std::abs(x);
    if constexpr (Mode == NormMode::Zero) {
      a += x != 0.0 ? 1.0 : 0.0;
    } else if constexpr (Mode == NormMode::One) {
      a += ax;
    } else if constexpr (Mode == NormMode::Two) {
      a += x * x;
    } else if constexpr (Mode == NormMode::Inf) {
      if (!(ax <= a)) a = std::isnan(a) ? a : ax;
    } else if constexpr (Mode == NormMode::NegInf) {
      if (!(ax >= a)) a = std::isnan(a) ? a : ax;
    } else {
      a += std::pow(ax, ord);
    }
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t) const {
    if constexpr (Mode == NormMode::Two) {
      if (s == 1) {
        a += cascade_map_sum(
            p, n, [](Vec<T> x) { return x * x; }, [](T x) { return x * x; });
        return;
      }
    } else if constexpr (Mode == NormMode::One) {
      if (s == 1) {
        a += cascade_map_sum(
            p, n, [](Vec<T> x) { return maximum(x, -x); }, [](T x) { return std::abs(x); });
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) fold(a, static_cast<double>(p[i * s]));
  }
  void merge(acc_t& a, const acc_t& b) const {
    if constexpr (Mode == NormMode::Inf || Mode == NormMode::NegInf) {
      fold(a, b);
    } else {
      a += b;
    }
  }
  void write(int64_t o, int64_t, const acc_t& a) const {
    double r = a;
    if constexpr (Mode == NormMode::Two) r = std::sqrt(a);
    if constexpr (Mode == NormMode::General) r = std::pow(a, 1.0 / ord);
    out[o] = static_cast<T>(r);
  }
};

// ---- logsumexp: a running max and the sum of exp(x - max), rescaled when the max grows ----

struct MaxSumExp {
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;  // 0: no finite contribution yet (empty, or every element -inf)
};

template <typename T>
struct LogSumExpReducer {
  using acc_t = MaxSumExp;
  T* out;
  acc_t identity() const { return {}; }
  static void fold(acc_t& a, double x) {
    if (x == -std::numeric_limits<double>::infinity()) return;
    if (std::isnan(x) || std::isnan(a.sum)) {
      a.max = a.sum = std::numeric_limits<double>::quiet_NaN();
    } else if (a.sum == 0) {
      a = {x, 1.0};
    } else if (x == a.max) {
      a.sum += 1.0;
    } else if (x > a.max) {
      a.sum = a.sum * std::exp(a.max - x) + 1.0;
      a.max = x;
    } else {
      a.sum += std::exp(x - a.max);
    }
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t s, int64_t) const {
    if (s == 1 && n >= Vec<T>::size) {
      // Max first, then the sum of exp(x - max) with SIMD exp; rows with an infinite or NaN
      // max take the careful element-wise path.
      const T m = simd_max(p, n);
      if (std::isfinite(m)) {
        const Vec<T> vm(m);
        const double sum = cascade_map_sum(
            p, n, [vm](Vec<T> x) { return exp(x - vm); }, [m](T x) { return std::exp(x - m); });
        merge(a, {static_cast<double>(m), sum});
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) fold(a, static_cast<double>(p[i * s]));
  }
  void merge(acc_t& a, const acc_t& b) const {
    if (b.sum == 0) return;
    if (std::isnan(a.sum)) return;
    if (a.sum == 0 || std::isnan(b.sum)) {
      a = b;
    } else if (a.max == b.max) {
      a.sum += b.sum;
    } else if (a.max > b.max) {
      a.sum += b.sum * std::exp(b.max - a.max);
    } else {
      a.sum = a.sum * std::exp(a.max - b.max) + b.sum;
      a.max = b.max;
    }
  }
  void write(int64_t o, int64_t, const acc_t& a) const {
    double r = a.sum == 0 ? -std::numeric_limits<double>::infinity() : a.max + std::log(a.sum);
    if (std::isnan(a.sum)) r = a.sum;
    out[o] = static_cast<T>(r);
  }
};

// ---- any/all over bool ----

template <bool IsAny>
struct LogicalReducer {
  using acc_t = bool;
  bool* out;
  acc_t identity() const { return !IsAny; }
  void row(acc_t& a, const bool* p, int64_t n, int64_t s, int64_t) const {
    if (a == IsAny) return;
    for (int64_t i = 0; i < n; ++i) {
      if (p[i * s] == IsAny) {
        a = IsAny;
        return;
      }
    }
  }
  void merge(acc_t& a, const acc_t& b) const { a = IsAny ? (a || b) : (a && b); }
  void write(int64_t o, int64_t, const acc_t& a) const { out[o] = a; }
};

template <typename T>
T* out_ptr(const ReducePlan& p, int i) {
  return reinterpret_cast<T*>(p.out[i]);
}

template <typename F>
void dispatch_sum_types(DType d, const char* op, const F& f) {
  switch (d) {
    case DType::Float32:
      f.template operator()<float>();
      break;
    case DType::Float64:
      f.template operator()<double>();
      break;
    case DType::Int64:
      f.template operator()<int64_t>();
      break;
    default:
      detail::unsupported_dtype(op, d, "float32, float64 or int64");
  }
}

template <typename F>
void dispatch_float_types(DType d, const char* op, const F& f) {
  switch (d) {
    case DType::Float32:
      f.template operator()<float>();
      break;
    case DType::Float64:
      f.template operator()<double>();
      break;
    default:
      detail::unsupported_dtype(op, d, "float32 or float64");
  }
}

template <typename T>
void run_norm(const ReducePlan& p, double ord) {
  T* out = out_ptr<T>(p, 0);
  const double inf = std::numeric_limits<double>::infinity();
  if (ord == 0) {
    reduce::run<T>(p, NormReducer<T, NormMode::Zero>{out, ord});
  } else if (ord == 1) {
    reduce::run<T>(p, NormReducer<T, NormMode::One>{out, ord});
  } else if (ord == 2) {
    reduce::run<T>(p, NormReducer<T, NormMode::Two>{out, ord});
  } else if (ord == inf) {
    reduce::run<T>(p, NormReducer<T, NormMode::Inf>{out, ord});
  } else if (ord == -inf) {
    reduce::run<T>(p, NormReducer<T, NormMode::NegInf>{out, ord});
  } else {
    reduce::run<T>(p, NormReducer<T, NormMode::General>{out, ord});
  }
}

void reduce_kernel(ReduceKind kind, const ReducePlan& p, const ReduceParams& params) {
  const double n = static_cast<double>(p.reduce_size());
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      dispatch_sum_types(p.in_dtype, "sum", [&]<typename T>() {
        reduce::run<T>(p, SumReducer<T>{out_ptr<T>(p, 0), kind == ReduceKind::Mean ? n : 1.0});
      });
      break;
    case ReduceKind::Prod:
      dispatch_sum_types(p.in_dtype, "prod", [&]<typename T>() {
        reduce::run<T>(p, ProdReducer<T>{out_ptr<T>(p, 0)});
      });
      break;
    case ReduceKind::Max:
    case ReduceKind::Min:
      KILN_DISPATCH_ALL(p.in_dtype, "max", [&]<typename T>() {
        if (kind == ReduceKind::Max) {
          reduce::run<T>(p, ExtremeReducer<T, true>{out_ptr<T>(p, 0)});
        } else {
          reduce::run<T>(p, ExtremeReducer<T, false>{out_ptr<T>(p, 0)});
        }
      });
      break;
    case ReduceKind::ArgMax:
    case ReduceKind::ArgMin:
      KILN_DISPATCH_ALL(p.in_dtype, "argmax", [&]<typename T>() {
        if (kind == ReduceKind::ArgMax) {
          reduce::run<T>(p, ArgReducer<T, true>{out_ptr<T>(p, 0), out_ptr<int64_t>(p, 1)});
        } else {
          reduce::run<T>(p, ArgReducer<T, false>{out_ptr<T>(p, 0), out_ptr<int64_t>(p, 1)});
        }
      });
      break;
    case ReduceKind::Var:
      dispatch_float_types(p.in_dtype, "var", [&]<typename T>() {
        reduce::run<T>(p, VarReducer<T>{out_ptr<T>(p, 0), out_ptr<T>(p, 1), params.correction,
                                        params.take_sqrt});
      });
      break;
    case ReduceKind::Norm:
      dispatch_float_types(p.in_dtype, "linalg_vector_norm",
                           [&]<typename T>() { run_norm<T>(p, params.ord); });
      break;
    case ReduceKind::LogSumExp:
      dispatch_float_types(p.in_dtype, "logsumexp", [&]<typename T>() {
        reduce::run<T>(p, LogSumExpReducer<T>{out_ptr<T>(p, 0)});
      });
      break;
    case ReduceKind::Any:
      reduce::run<bool>(p, LogicalReducer<true>{out_ptr<bool>(p, 0)});
      break;
    case ReduceKind::All:
      reduce::run<bool>(p, LogicalReducer<false>{out_ptr<bool>(p, 0)});
      break;
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::reduce_kernels, &reduce_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
