#pragma once
// Small matrix products as generated kernels (max-autotune): mm, bmm, addmm and baddbmm of
// float32 or float64 with at most kSmallGemmWork multiply-adds (batch * M * N * K) get, beside
// their extern call (OpenBLAS), loop nests computing the same output, and the runtime keeps the
// faster (autotune.h): for small products the library's dispatch and threading cost more than
// the arithmetic.
//   product:  out[b, i, j] = sum_k a[b, i, k] * b[b, k, j] (* alpha): a Reduction kernel over k;
//   addmm/baddbmm: the product into a buffer of its own, then out = beta * self + product
//             (self broadcast; not read when beta is zero, as the extern kernel), a pointwise
//             kernel the scheduler fuses with the reduction per row.
#include "inductor/loop_ir.h"

#include <cstdint>
#include <optional>

namespace kiln::inductor {

// 2^18 multiply-adds: e.g. 64 x 64 x 64; above, the library's blocked kernels win.
constexpr int64_t kSmallGemmWork = int64_t{1} << 18;

// The call with its generated alternative, or nullopt when it is no small float product. New
// intermediate buffers go into `program`; the kernels are unscheduled (one per nest).
std::optional<ExternOrGenerated> gemm_alternative(const ExternCall& extern_call, Program& program);

}  // namespace kiln::inductor
