#pragma once
// Elementwise loops over a TensorIterator:
//   cpu_kernel(iter, [](float a, float b) { return a + b; });              scalar only
//   cpu_kernel_vec(iter, scalar_op, [](Vec<float> a, Vec<float> b) {...}); SIMD + scalar tails
// Operand 0 is the output; inputs follow in argument order. Contiguous inner loops (and inputs
// broadcast with stride 0) take the SIMD path; anything else walks strides.
#include "ops/cpu/vec.h"
#include "ops/iterator/tensor_iterator.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

namespace kiln::cpu::KILN_CAP_NAMESPACE {

template <typename F>
struct function_traits : function_traits<decltype(&F::operator())> {};
template <typename C, typename R, typename... Args>
struct function_traits<R (C::*)(Args...) const> {
  using result = R;
  using args = std::tuple<Args...>;
  static constexpr size_t arity = sizeof...(Args);
  template <size_t I>
  using arg = std::tuple_element_t<I, args>;
};

namespace detail {

template <typename Op, size_t... I>
inline void scalar_loop(char** data, const int64_t* strides, int64_t n, const Op& op,
                        std::index_sequence<I...>) {
  using traits = function_traits<Op>;
  using R = typename traits::result;
  char* out = data[0];
  const int64_t s_out = strides[0];
  bool contiguous =
      s_out == static_cast<int64_t>(sizeof(R)) &&
      ((strides[I + 1] == static_cast<int64_t>(sizeof(typename traits::template arg<I>))) && ...);
  if (contiguous) {
    R* o = reinterpret_cast<R*>(out);
    std::tuple<const typename traits::template arg<I>*...> in{
        reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1])...};
    for (int64_t i = 0; i < n; ++i) o[i] = op(std::get<I>(in)[i]...);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<R*>(out + i * s_out) =
        op(*reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1] +
                                                                      i * strides[I + 1])...);
  }
}

// SIMD loop where each input is contiguous or broadcast (stride 0). The tail goes through the
// vector op too (partial loads), so every element is computed by the same code whatever the
// length or alignment.
template <typename Op, typename VOp, size_t... I>
inline void vector_loop(char** data, const int64_t* strides, int64_t n, const VOp& vop,
                        std::index_sequence<I...>) {
  using traits = function_traits<Op>;
  using R = typename traits::result;
  using V = Vec<R>;
  constexpr int W = V::size;
  R* out = reinterpret_cast<R*>(data[0]);
  const R* in[sizeof...(I) + 1] = {reinterpret_cast<const R*>(data[I + 1])..., nullptr};
  const bool bcast[sizeof...(I) + 1] = {(strides[I + 1] == 0)..., false};
  // Broadcast inputs are loaded once.
  V splat[sizeof...(I) + 1];
  ((splat[I] = bcast[I] ? V(*in[I]) : V(R(0))), ...);
  auto load = [&](size_t k, int64_t i) { return bcast[k] ? splat[k] : V::loadu(in[k] + i); };
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    V r0 = vop(load(I, i)...);
    V r1 = vop(load(I, i + W)...);
    r0.storeu(out + i);
    r1.storeu(out + i + W);
  }
  for (; i + W <= n; i += W) vop(load(I, i)...).storeu(out + i);
  if (i < n) {
    int rest = static_cast<int>(n - i);
    vop((bcast[I] ? splat[I] : V::loadu(in[I] + i, rest))...).storeu(out + i, rest);
  }
}

// Strided operands: gather a vector's worth of each input, apply the vector op, scatter.
template <typename Op, typename VOp, size_t... I>
inline void gather_loop(char** data, const int64_t* strides, int64_t n, const VOp& vop,
                        std::index_sequence<I...>) {
  using traits = function_traits<Op>;
  using R = typename traits::result;
  using V = Vec<R>;
  constexpr int W = V::size;
  R buf[sizeof...(I) + 1][W];
  for (int64_t i = 0; i < n; i += W) {
    int m = static_cast<int>(std::min<int64_t>(W, n - i));
    for (int j = 0; j < m; ++j) {
      ((buf[I][j] = *reinterpret_cast<const R*>(data[I + 1] + (i + j) * strides[I + 1])), ...);
    }
    R res[W];
    vop(V::loadu(buf[I], m)...).storeu(res, m);
    for (int j = 0; j < m; ++j) *reinterpret_cast<R*>(data[0] + (i + j) * strides[0]) = res[j];
  }
}

}  // namespace detail

template <typename Op>
void cpu_kernel(ops::TensorIterator& iter, const Op& op, int64_t grain_size = kGrainSize) {
  using traits = function_traits<Op>;
  constexpr size_t N = traits::arity;
  const int nt = iter.ntensors();
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
        std::array<char*, N + 1> ptrs;
        for (int64_t r = 0; r < rows; ++r) {
          for (size_t k = 0; k <= N; ++k) ptrs[k] = data[k] + r * strides[nt + static_cast<int>(k)];
          detail::scalar_loop(ptrs.data(), strides, n, op, std::make_index_sequence<N>{});
        }
      },
      grain_size);
  iter.finish();
}

// op and vop compute the same function; all operands share one C++ type. Every element goes
// through vop (op gives the signature), so results do not depend on layout or length.
template <typename Op, typename VOp>
void cpu_kernel_vec(ops::TensorIterator& iter, const Op& op, const VOp& vop,
                    int64_t grain_size = kGrainSize) {
  using traits = function_traits<Op>;
  using R = typename traits::result;
  constexpr size_t N = traits::arity;
  (void)op;  // only its signature is used
  const int nt = iter.ntensors();
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
        std::array<char*, N + 1> ptrs;
        bool simd = strides[0] == static_cast<int64_t>(sizeof(R));
        for (size_t k = 1; k <= N; ++k) {
          simd &= strides[k] == static_cast<int64_t>(sizeof(R)) || strides[k] == 0;
        }
        for (int64_t r = 0; r < rows; ++r) {
          for (size_t k = 0; k <= N; ++k) ptrs[k] = data[k] + r * strides[nt + static_cast<int>(k)];
          if (simd) {
            detail::vector_loop<Op>(ptrs.data(), strides, n, vop, std::make_index_sequence<N>{});
          } else {
            detail::gather_loop<Op>(ptrs.data(), strides, n, vop, std::make_index_sequence<N>{});
          }
        }
      },
      grain_size);
  iter.finish();
}

}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
