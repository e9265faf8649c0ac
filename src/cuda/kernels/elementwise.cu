// Elementwise kernels: binary arithmetic and comparisons, unary math, where. Operands of an op
// share one type T (the host converts them first); arithmetic runs in Acc<T>. The op is a
// kernel argument switched on per element: the branch is uniform across a warp, and one kernel
// per type (not per op and type) keeps nvcc's time and the library small.
//
// Two paths: contiguous operands aligned to 16 bytes load and store 16-byte vectors; everything
// else (broadcast, strided, unaligned, the vector path's tail) indexes through sizes/strides.
#include "cuda/cuda_check.h"
#include "cuda/kernels/types.cuh"

#include <cmath>

namespace kiln::cuda::kernels {
namespace {

template <typename A>
inline constexpr bool kFloating = std::is_floating_point_v<A>;

template <typename A>
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (kFloating<A>) return v != v;
  return false;
}

// fmod (the sign of a) and remainder (the sign of b), as the CPU kernels compute them.
template <typename A>
__device__ __forceinline__ A modulo(BinaryKind kind, A a, A b) {
  if constexpr (kFloating<A>) {
    A mod = fmod(a, b);
    if (kind == BinaryKind::Remainder && mod != 0 && ((b < 0) != (mod < 0))) mod += b;
    return mod;
  } else {
    if (b == 0) return 0;  // refused on the host before the launch
    if constexpr (std::is_signed_v<A>) {
      if (b == -1) return 0;  // INT_MIN % -1 would trap
    }
    A r = static_cast<A>(a % b);
    if constexpr (std::is_signed_v<A>) {
      if (kind == BinaryKind::Remainder && r != 0 && ((r < 0) != (b < 0)))
        r = static_cast<A>(r + b);
    }
    return r;
  }
}

// Shifts of integers: amounts that are negative or at least the bit width give 0 (left) or the
// sign fill (right), as PyTorch.
template <typename T>
__device__ __forceinline__ T shifted(BinaryKind kind, T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    const bool out_of_range = static_cast<std::make_signed_t<T>>(b) < 0;
    if (kind == BinaryKind::ShiftLeft) {
      if (out_of_range || b >= static_cast<T>(sizeof(T) * 8)) return 0;
      return static_cast<T>(static_cast<U>(a) << b);
    }
    constexpr T max_shift = sizeof(T) * 8 - std::is_signed_v<T>;
    if (out_of_range || b >= max_shift) return static_cast<T>(a >> max_shift);
    return static_cast<T>(a >> b);
  } else {
    return a;  // shifts take integers only (the op's meta refuses the rest)
  }
}

// The arithmetic ops, in the accumulation type A.
template <typename A>
__device__ __forceinline__ A arith(BinaryKind kind, A a, A b, A alpha) {
  if constexpr (std::is_same_v<A, bool>) {
    switch (kind) {
      case BinaryKind::Add:
        return a || (alpha && b);
      case BinaryKind::Mul:
        return a && b;
      case BinaryKind::Maximum:
        return a || b;
      case BinaryKind::Minimum:
        return a && b;
      default:
        return a;  // Div computes in a floating type (the host promotes)
    }
  } else {
    switch (kind) {
      case BinaryKind::Add:
        return a + alpha * b;
      case BinaryKind::Mul:
        return a * b;
      case BinaryKind::Div:
        if constexpr (kFloating<A>) return a / b;
        return b == 0 ? A(0) : static_cast<A>(a / b);  // integral true division never gets here
      case BinaryKind::Maximum:
        if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
        return a > b ? a : b;
      case BinaryKind::Minimum:
        if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
        return a < b ? a : b;
      case BinaryKind::Fmod:
      case BinaryKind::Remainder:
        return modulo(kind, a, b);
      default:
        return a;
    }
  }
}

template <typename A>
__device__ __forceinline__ bool compare(BinaryKind kind, A a, A b) {
  switch (kind) {
    case BinaryKind::Eq:
      return a == b;
    case BinaryKind::Ne:
      return a != b;
    case BinaryKind::Lt:
      return a < b;
    case BinaryKind::Le:
      return a <= b;
    case BinaryKind::Gt:
      return a > b;
    default:
      return a >= b;
  }
}

// out = op(a, b) in Acc<T>, stored as Out (T, or bool for comparisons).
template <typename Out, typename T>
struct BinaryOp {
  BinaryKind kind;
  Acc<T> alpha;
  __device__ __forceinline__ Out operator()(T a, T b) const {
    const Acc<T> x = convert<Acc<T>>(a), y = convert<Acc<T>>(b);
    if constexpr (std::is_same_v<Out, bool> && !std::is_same_v<T, bool>) {
      return compare(kind, x, y);
    } else {
      if (kind >= BinaryKind::Eq) return convert<Out>(compare(kind, x, y));  // bool operands
      if (kind == BinaryKind::ShiftLeft || kind == BinaryKind::ShiftRight) {
        return convert<Out>(shifted(kind, a, b));
      }
      return convert<Out>(arith(kind, x, y, alpha));
    }
  }
};

template <typename A>
__device__ __forceinline__ A unary_math(UnaryKind kind, A x) {
  if constexpr (std::is_same_v<A, bool>) {
    return x;  // abs/relu of bool is itself; the others do not take bool
  } else if constexpr (!kFloating<A>) {
    switch (kind) {
      case UnaryKind::Neg:
        return static_cast<A>(-x);
      case UnaryKind::Abs:
        if constexpr (std::is_signed_v<A>) return x < 0 ? static_cast<A>(-x) : x;
        return x;
      case UnaryKind::Relu:
        if constexpr (std::is_signed_v<A>) return x < A(0) ? A(0) : x;
        return x;
      case UnaryKind::Sign:
        if constexpr (std::is_signed_v<A>) return static_cast<A>((A(0) < x) - (x < A(0)));
        return static_cast<A>(x != A(0));
      default:
        return x;  // the math ops promote integers to a floating type on the host
    }
  } else {
    constexpr A kHalf = A(0.5), kOne = A(1);
    switch (kind) {
      case UnaryKind::Neg:
        return -x;
      case UnaryKind::Abs:
        return fabs(x);
      case UnaryKind::Exp:
        return exp(x);
      case UnaryKind::Log:
        return log(x);
      case UnaryKind::Sqrt:
        return sqrt(x);
      case UnaryKind::Rsqrt:
        return kOne / sqrt(x);
      case UnaryKind::Sin:
        return sin(x);
      case UnaryKind::Cos:
        return cos(x);
      case UnaryKind::Tanh:
        return tanh(x);
      case UnaryKind::Sigmoid:
        return kOne / (kOne + exp(-x));
      case UnaryKind::Relu:
        return x < A(0) ? A(0) : x;  // NaN and -0.0 pass, as on the CPU
      // 1 + erf(z) written as erfc(-z): no cancellation for large negative x.
      case UnaryKind::GeluErf:
        return kHalf * x * erfc(-x * A(0.70710678118654752440));
      case UnaryKind::GeluTanh: {
        const A k0 = A(0.79788456080286535588), k1 = A(0.044715);
        return kHalf * x * (kOne + tanh(k0 * (x + k1 * x * x * x)));
      }
      case UnaryKind::Sign:
        return static_cast<A>((A(0) < x) - (x < A(0)));
      case UnaryKind::Erfinv:
        return static_cast<A>(erfinv(static_cast<double>(x)));
    }
    return x;
  }
}

template <typename T>
struct UnaryOp {
  UnaryKind kind;
  __device__ __forceinline__ T operator()(T a) const {
    return convert<T>(unary_math(kind, convert<Acc<T>>(a)));
  }
};

// ---- kernels ----

constexpr int kVecBytes = 16;

template <typename Out, typename T, typename F>
__global__ void binary_vec(Out* out, const T* a, const T* b, int64_t nvec, F f) {
  constexpr int V = kVecBytes / sizeof(T);
  using VT = VecOf<T, V>;
  using VO = VecOf<Out, V>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < nvec;
       i += stride) {
    const VT x = reinterpret_cast<const VT*>(a)[i];
    const VT y = reinterpret_cast<const VT*>(b)[i];
    VO r;
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = f(x.v[k], y.v[k]);
    reinterpret_cast<VO*>(out)[i] = r;
  }
}

template <typename Out, typename T, typename F>
__global__ void binary_strided(Geometry g, Out* out, const T* a, const T* b, Offsets<3> s,
                               int64_t start, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = start + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += stride) {
    if (g.contiguous) {
      out[i] = f(a[i], b[i]);
    } else {
      int64_t off[3];
      offsets_of<3>(i, g, s, off);
      out[off[0]] = f(a[off[1]], b[off[2]]);
    }
  }
}

template <typename T, typename F>
__global__ void unary_vec(T* out, const T* a, int64_t nvec, F f) {
  constexpr int V = kVecBytes / sizeof(T);
  using VT = VecOf<T, V>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < nvec;
       i += stride) {
    const VT x = reinterpret_cast<const VT*>(a)[i];
    VT r;
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = f(x.v[k]);
    reinterpret_cast<VT*>(out)[i] = r;
  }
}

template <typename T, typename F>
__global__ void unary_strided(Geometry g, T* out, const T* a, Offsets<2> s, int64_t start, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = start + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += stride) {
    if (g.contiguous) {
      out[i] = f(a[i]);
    } else {
      int64_t off[2];
      offsets_of<2>(i, g, s, off);
      out[off[0]] = f(a[off[1]]);
    }
  }
}

template <typename T>
__global__ void where_kernel(Geometry g, T* out, const bool* c, const T* a, const T* b,
                             Offsets<4> s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += stride) {
    int64_t off[4];
    offsets_of<4>(i, g, s, off);
    out[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
  }
}

// Launches the vector kernel over the aligned prefix, then the indexed kernel over the rest.
// Returns where the indexed kernel starts (0 when the vector path does not apply).
template <typename T, typename Out>
int64_t vector_prefix(const Geometry& g, std::initializer_list<const void*> inputs,
                      const void* out) {
  constexpr int V = kVecBytes / sizeof(T);
  if (!g.contiguous || g.numel < V) return 0;
  for (const void* p : inputs)
    if (!aligned(p, kVecBytes)) return 0;
  if (!aligned(out, sizeof(Out) * V)) return 0;
  return g.numel / V * V;
}

}  // namespace

void binary(BinaryKind kind, const Geometry& g, const Operand& out, const Operand& a,
            const Operand& b, double alpha, int64_t alpha_int, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[3] = {&out, &a, &b};
  const Offsets<3> s = offsets_from<3>(ops);
  dispatch(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    const A alpha_acc = kFloating<A> ? static_cast<A>(alpha) : static_cast<A>(alpha_int);
    auto run = [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      const BinaryOp<Out, T> f{kind, alpha_acc};
      auto* o = static_cast<Out*>(out.data);
      const auto* x = static_cast<const T*>(a.data);
      const auto* y = static_cast<const T*>(b.data);
      const int64_t done = vector_prefix<T, Out>(g, {x, y}, o);
      if (done > 0) {
        const int64_t nvec = done / (kVecBytes / static_cast<int64_t>(sizeof(T)));
        binary_vec<Out, T><<<blocks_for(nvec), kThreads, 0, stream>>>(o, x, y, nvec, f);
        KILN_CUDA_CHECK_LAUNCH();
      }
      if (done < g.numel) {
        binary_strided<Out, T>
            <<<blocks_for(g.numel - done), kThreads, 0, stream>>>(g, o, x, y, s, done, f);
        KILN_CUDA_CHECK_LAUNCH();
      }
    };
    if (is_comparison(kind)) {
      run(Tag<bool>{});
    } else {
      run(Tag<T>{});
    }
  });
}

void unary(UnaryKind kind, const Geometry& g, const Operand& out, const Operand& in,
           cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[2] = {&out, &in};
  const Offsets<2> s = offsets_from<2>(ops);
  dispatch(in.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const UnaryOp<T> f{kind};
    auto* o = static_cast<T*>(out.data);
    const auto* x = static_cast<const T*>(in.data);
    const int64_t done = vector_prefix<T, T>(g, {x}, o);
    if (done > 0) {
      const int64_t nvec = done / (kVecBytes / static_cast<int64_t>(sizeof(T)));
      unary_vec<T><<<blocks_for(nvec), kThreads, 0, stream>>>(o, x, nvec, f);
      KILN_CUDA_CHECK_LAUNCH();
    }
    if (done < g.numel) {
      unary_strided<T><<<blocks_for(g.numel - done), kThreads, 0, stream>>>(g, o, x, s, done, f);
      KILN_CUDA_CHECK_LAUNCH();
    }
  });
}

void where(const Geometry& g, const Operand& out, const Operand& cond, const Operand& a,
           const Operand& b, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[4] = {&out, &cond, &a, &b};
  const Offsets<4> s = offsets_from<4>(ops);
  dispatch(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    where_kernel<T><<<blocks_for(g.numel), kThreads, 0, stream>>>(
        g, static_cast<T*>(out.data), static_cast<const bool*>(cond.data),
        static_cast<const T*>(a.data), static_cast<const T*>(b.data), s);
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::cuda::kernels
