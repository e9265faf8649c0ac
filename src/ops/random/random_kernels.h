#pragma once
// Per-capability kernels behind the random ops (src/ops/random/random.kernel.cpp). Each fill
// writes n elements of a contiguous buffer of `dtype` from the Philox stream, element i reading
// the words philox.h's mapping gives it, so results do not depend on the thread count.
#include "ops/cpu/capability.h"
#include "ops/iterator/tensor_iterator.h"
#include "ops/random/philox.h"

namespace kiln::ops {

using random_detail::PhiloxStream;

// 32-bit words per element each fill uses (so callers reserve philox_blocks(n, words) counters).
inline int uniform_words(DType dtype) { return dtype == DType::Float64 ? 2 : 1; }
// normal: two uniforms per pair of elements (see normal_fill).
inline int normal_words(DType dtype) { return dtype == DType::Float64 ? 2 : 1; }
inline int randint_words(uint64_t range) { return range > (uint64_t{1} << 32) ? 2 : 1; }
inline constexpr int kRandpermWords = 2;

// Uniform in [from, to), with as many random bits as dtype's mantissa holds.
using UniformFillKernel = void(void* data, DType dtype, int64_t n, double from, double to,
                               PhiloxStream stream);
// mean + std * z, z standard normal by Box-Muller: each pair of elements from two uniforms.
using NormalFillKernel = void(void* data, DType dtype, int64_t n, double mean, double std,
                              PhiloxStream stream);
// Integers in [low, low + range).
using RandintFillKernel = void(void* data, DType dtype, int64_t n, int64_t low, uint64_t range,
                               PhiloxStream stream);
// A permutation of 0..n-1 by a Fisher-Yates shuffle; step i draws from element i's words.
using RandpermFillKernel = void(int64_t* data, int64_t n, PhiloxStream stream);
// out = mean + std * z over an iterator (out; mean, std, z) computing in float64.
using NormalAffineKernel = void(TensorIterator& iter);
// out = (u < p) over an iterator (out; p, u) computing in float64.
using BernoulliKernel = void(TensorIterator& iter);

extern cpu::KernelDispatch<UniformFillKernel> uniform_fill_kernels;
extern cpu::KernelDispatch<NormalFillKernel> normal_fill_kernels;
extern cpu::KernelDispatch<RandintFillKernel> randint_fill_kernels;
extern cpu::KernelDispatch<RandpermFillKernel> randperm_fill_kernels;
extern cpu::KernelDispatch<NormalAffineKernel> normal_affine_kernels;
extern cpu::KernelDispatch<BernoulliKernel> bernoulli_kernels;

}  // namespace kiln::ops
