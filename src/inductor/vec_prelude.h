#pragma once
// The vector type of generated CPU kernels (DESIGN.md §5): C++ source that goes into every
// generated translation unit after the scalar prelude, and that vectorize.h's loops are written
// against.
//
// It defines, over GCC/clang vector extensions (C++17, no intrinsics):
//   Vec<T, N>, Mask<T, N>     T = float or double; Mask holds the integer lanes (0 or -1) that
//                             comparisons produce. VecF/VecD/MaskF/MaskD are the native widths
//                             kiln_vec_width_float/_double: 16/8 with AVX-512, 8/4 with AVX, 4/2.
//   Vec::load/store (unaligned), broadcast, iota, from_mask; Mask::broadcast, load_bools,
//   store_bools (0/1 bytes); + - * / unary -, == != < <= > >= (to a Mask), & | ^ ~ on masks;
//   vec_where, vec_maximum/vec_minimum (NaN-propagating as the scalar kiln_maximum/kiln_minimum),
//   vec_abs, vec_sqrt, vec_rsqrt (1/sqrt), vec_floor/ceil/trunc/round (nearbyint), vec_div_trunc,
//   vec_div_floor, vec_widen_low/high (a float vector's halves as double vectors), vec_<f> for the
//   math functions of loop_ir.h (unary_math_functions, binary_math_functions): float32 exp, tanh,
//   erf and erfc inline (vec_fast_math.h), the others through SLEEF's GNU vector ABI
//   (libsleefgnuabi; 3.5-ulp float variants where SLEEF has them, 1-ulp otherwise),
//   reduce_add<A>/reduce_mul<A> (tree, lanes combined in A), reduce_max/min.
#include <string>

namespace kiln::inductor {

const std::string& vec_prelude();

}  // namespace kiln::inductor
