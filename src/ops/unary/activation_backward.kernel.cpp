// Fused backward kernels of the activations: gelu_backward (erf and tanh forms),
// threshold_backward (relu's), hardtanh_backward (relu6's), silu_backward, sigmoid_backward /
// tanh_backward (from the forward's result), leaky_relu_backward, elu_backward and
// softplus_backward. One pass over (grad_output, self) instead of the several elementwise ops
// their formulas take. float32/float64 take SIMD paths.
// First: capability.h (through it) defines the capability namespace that loops.h uses.
#include "ops/unary/activation_backward_kernels.h"

#include "ops/cpu/loops.h"
#include "ops/unary/unary_math.h"

#include <cmath>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::ActivationBackward;

template <typename T>
inline constexpr bool kSimdFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;

constexpr double kInvSqrt2Pi = 0.5 * M_2_SQRTPI * M_SQRT1_2;  // 1 / sqrt(2 pi)
constexpr double kTanhBeta = M_SQRT2 * M_2_SQRTPI * 0.5;      // sqrt(2 / pi)
constexpr double kTanhKappa = 0.044715;

// d/dx [x Phi(x)] = Phi(x) + x phi(x).
struct GeluErfBackward {
  template <typename T>
  T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
    const T pdf = std::exp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
    return g * (cdf + x * pdf);
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    const Vec<T> cdf = Vec<T>(T(0.5)) * (Vec<T>(T(1)) + verf(x * Vec<T>(T(M_SQRT1_2))));
    const Vec<T> pdf = fast_exp(Vec<T>(T(-0.5)) * x * x) * Vec<T>(T(kInvSqrt2Pi));
    return g * (cdf + x * pdf);
  }
};

// d/dx [x/2 (1 + tanh(u))], u = beta (x + kappa x^3):
// (1 + tanh u) / 2 + x/2 (1 - tanh^2 u) beta (1 + 3 kappa x^2).
struct GeluTanhBackward {
  template <typename T>
  T operator()(T g, T x) const {
    const T x2 = x * x;
    const T t = std::tanh(T(kTanhBeta) * (x + T(kTanhKappa) * x2 * x));
    const T du = T(kTanhBeta) * (T(1) + T(3 * kTanhKappa) * x2);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    using V = Vec<T>;
    const V x2 = x * x;
    const V t = vtanh(V(T(kTanhBeta)) * (x + V(T(kTanhKappa)) * x2 * x));
    const V du = V(T(kTanhBeta)) * (V(T(1)) + V(T(3 * kTanhKappa)) * x2);
    const V half(T(0.5)), one(T(1));
    return g * (half * (one + t) + half * x * (one - t * t) * du);
  }
};

// No gradient where self <= threshold (NaN passes it, as in PyTorch).
struct ThresholdBackward {
  double threshold;
  template <typename T>
  T operator()(T g, T x) const {
    return x <= static_cast<T>(threshold) ? T(0) : g;
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    return select<T>(x <= Vec<T>(static_cast<T>(threshold)), Vec<T>(T(0)), g);
  }
};

// No gradient at or beyond the limits (hardtanh_backward).
struct HardtanhBackward {
  double lo, hi;
  template <typename T>
  T operator()(T g, T x) const {
    return (x <= static_cast<T>(lo) || x >= static_cast<T>(hi)) ? T(0) : g;
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    const Vec<T> zero(T(0));
    return select<T>(x <= Vec<T>(static_cast<T>(lo)), zero,
                     select<T>(x >= Vec<T>(static_cast<T>(hi)), zero, g));
  }
};

// d/dx [x sigmoid(x)] = s (1 + x (1 - s)).
struct SiluBackward {
  template <typename T>
  T operator()(T g, T x) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return g * s * (T(1) + x * (T(1) - s));
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    const Vec<T> one(T(1));
    const Vec<T> s = one / (one + fast_exp(-x));
    return g * s * (one + x * (one - s));
  }
};

// From the forward's result y: sigmoid' = y (1 - y), tanh' = 1 - y^2.
struct SigmoidBackward {
  template <typename T>
  T operator()(T g, T y) const {
    return g * (T(1) - y) * y;
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> y) const {
    return g * (Vec<T>(T(1)) - y) * y;
  }
};
struct TanhBackward {
  template <typename T>
  T operator()(T g, T y) const {
    return g * (T(1) - y * y);
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> y) const {
    return g * (Vec<T>(T(1)) - y * y);
  }
};

// x > 0 ? g : g * slope (leaky_relu_backward; the same from the result for a positive slope).
struct LeakyReluBackward {
  double slope;
  template <typename T>
  T operator()(T g, T x) const {
    return x > T(0) ? g : g * static_cast<T>(slope);
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    return select<T>(x > Vec<T>(T(0)), g, g * Vec<T>(static_cast<T>(slope)));
  }
};

// elu_backward: scale where x > 0; below, input_scale * alpha * scale * exp(input_scale x) from
// the input, or input_scale * (y + alpha * scale) from the result y.
struct EluBackward {
  double alpha, scale, input_scale;
  bool is_result;
  template <typename T>
  T operator()(T g, T x) const {
    const T neg = static_cast<T>(alpha * scale);
    const T is = static_cast<T>(input_scale);
    if (!(x <= T(0))) return g * static_cast<T>(scale);  // NaN too, as PyTorch
    return is_result ? g * is * (x + neg) : g * is * neg * std::exp(x * is);
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    const Vec<T> neg(static_cast<T>(alpha * scale));
    const Vec<T> is(static_cast<T>(input_scale));
    const Vec<T> below = is_result ? g * is * (x + neg) : g * is * neg * fast_exp(x * is);
    return select<T>(x <= Vec<T>(T(0)), below, g * Vec<T>(static_cast<T>(scale)));
  }
};

// softplus_backward: g where beta x > threshold (the forward is x there), else g sigmoid(beta x).
struct SoftplusBackward {
  double beta, threshold;
  template <typename T>
  T operator()(T g, T x) const {
    const T bx = x * static_cast<T>(beta);
    return bx > static_cast<T>(threshold) ? g : g / (T(1) + std::exp(-bx));
  }
  template <typename T>
  Vec<T> vec(Vec<T> g, Vec<T> x) const {
    const Vec<T> bx = x * Vec<T>(static_cast<T>(beta));
    return select<T>(bx > Vec<T>(static_cast<T>(threshold)), g, g / (Vec<T>(T(1)) + fast_exp(-bx)));
  }
};

// (grad, self) in T; 16-bit floats compute through float.
template <typename T, typename Op>
void run_typed(ops::TensorIterator& iter, const Op& op) {
  if constexpr (kSimdFloat<T>) {
    cpu_kernel_vec(
        iter, [op](T g, T x) -> T { return op(g, x); },
        [op](Vec<T> g, Vec<T> x) -> Vec<T> { return op.vec(g, x); });
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    cpu_kernel(iter,
               [op](T g, T x) -> T { return T(op(static_cast<float>(g), static_cast<float>(x))); });
  } else {
    cpu_kernel(iter, [op](T g, T x) -> T { return op(g, x); });
  }
}

template <typename Op>
void run_floating(ops::TensorIterator& iter, const Op& op, const char* name) {
  KILN_DISPATCH_FLOATING(iter.dtype(0), name, [&]<typename T>() { run_typed<T>(iter, op); });
}
template <typename Op>
void run_numeric(ops::TensorIterator& iter, const Op& op, const char* name) {
  KILN_DISPATCH_ALL_NO_BOOL(iter.dtype(0), name, [&]<typename T>() { run_typed<T>(iter, op); });
}

void activation_backward_kernel(ops::TensorIterator& iter, ActivationBackward op,
                                const ops::ActivationBackwardParams& p) {
  const double a = p.a, b = p.b;
  switch (op) {
    case ActivationBackward::GeluErf:
      return run_floating(iter, GeluErfBackward{}, "gelu_backward");
    case ActivationBackward::GeluTanh:
      return run_floating(iter, GeluTanhBackward{}, "gelu_backward");
    case ActivationBackward::Threshold:
      return run_numeric(iter, ThresholdBackward{a}, "threshold_backward");
    case ActivationBackward::Hardtanh:
      return run_numeric(iter, HardtanhBackward{a, b}, "hardtanh_backward");
    case ActivationBackward::Silu:
      return run_floating(iter, SiluBackward{}, "silu_backward");
    case ActivationBackward::Sigmoid:
      return run_floating(iter, SigmoidBackward{}, "sigmoid_backward");
    case ActivationBackward::Tanh:
      return run_floating(iter, TanhBackward{}, "tanh_backward");
    case ActivationBackward::LeakyRelu:
      return run_floating(iter, LeakyReluBackward{a}, "leaky_relu_backward");
    case ActivationBackward::Elu:
      return run_floating(iter, EluBackward{a, b, p.c, p.flag}, "elu_backward");
    case ActivationBackward::Softplus:
      return run_floating(iter, SoftplusBackward{a, b}, "softplus_backward");
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::activation_backward_kernels, &activation_backward_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
