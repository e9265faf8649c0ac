// GEMM: float32 through oneDNN (its matmul primitive for linear layers' products, sgemm for the
// rest), float64 through OpenBLAS. Strides map onto the
// transpose flags and leading dimensions, other layouts are copied once, and small batched
// products run in parallel over the batch.
//
// Why two libraries: Debian 12's OpenBLAS (0.3.21) picks its kernels by CPU model number and
// falls back to SSE3 ("Prescott") kernels on CPUs newer than itself — 33 GFLOP/s for a 1024^3
// float32 product on a Xeon of model 207, against 156 with its SkylakeX kernels and 160 for
// oneDNN, whose JIT kernels follow the CPU's instruction-set flags instead (docs/PERF.md).
#include "ops/linalg/gemm.h"

#include "ops/linalg/onednn_matmul.h"

#include <kiln/core/error.h>
#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/view.h>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <optional>
#include <type_traits>

namespace kiln::ops::linalg {

void set_blas_threads(int n) {
  static std::atomic<int> current{-1};
  if (current.exchange(n) != n) openblas_set_num_threads(n);
}

std::optional<BlasLayout> blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= std::max<int64_t>(1, cols))) {
    return BlasLayout{false, rows == 1 ? std::max<int64_t>(1, cols) : s0};
  }
  if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= std::max<int64_t>(1, rows))) {
    return BlasLayout{true, cols == 1 ? std::max<int64_t>(1, rows) : s1};
  }
  return std::nullopt;
}

namespace {

bool blas_ready(const Tensor& t) {
  return blas_layout(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1)).has_value();
}

int blas_int(int64_t v) {
  KILN_CHECK(v <= INT_MAX, "gemm: size {} exceeds what BLAS can index", v);
  return static_cast<int>(v);
}

// One product on raw strided matrices whose layouts blas_layout accepts.
template <typename T>
void blas_gemm(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t as0, int64_t as1,
               const T* b, int64_t bs0, int64_t bs1, T beta, T* c, int64_t cs0, int64_t cs1) {
  auto cl = *blas_layout(m, n, cs0, cs1);
  if (cl.transposed) {
    // C column-major: compute C^T = B^T A^T, which is row-major.
    blas_gemm<T>(n, m, k, alpha, b, bs1, bs0, a, as1, as0, beta, c, cs1, cs0);
    return;
  }
  auto al = *blas_layout(m, k, as0, as1);
  auto bl = *blas_layout(k, n, bs0, bs1);
  const auto ta = al.transposed ? CblasTrans : CblasNoTrans;
  const auto tb = bl.transposed ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    // dnnl_sgemm is row-major and threads over OpenMP (kiln's pool), serially when called
    // from inside a parallel region.
    const dnnl_status_t status = dnnl_sgemm(al.transposed ? 'T' : 'N', bl.transposed ? 'T' : 'N', m,
                                            n, k, alpha, a, al.ld, b, bl.ld, beta, c, cl.ld);
    KILN_CHECK(status == dnnl_success, "gemm: oneDNN sgemm failed (status {}) for {}x{}x{}",
               static_cast<int>(status), m, n, k);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, blas_int(m), blas_int(n), blas_int(k), alpha, a,
                blas_int(al.ld), b, blas_int(bl.ld), beta, c, blas_int(cl.ld));
  }
}

// Integer products: exact, wrapping like the dtype's own arithmetic (computed in uint64).
template <typename T>
void loop_gemm(int64_t m, int64_t n, int64_t k, int64_t alpha, const T* a, int64_t as0, int64_t as1,
               const T* b, int64_t bs0, int64_t bs1, int64_t beta, T* c, int64_t cs0, int64_t cs1) {
  using U = uint64_t;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      U acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += static_cast<U>(static_cast<int64_t>(a[i * as0 + p * as1])) *
               static_cast<U>(static_cast<int64_t>(b[p * bs0 + j * bs1]));
      }
      T& dst = c[i * cs0 + j * cs1];
      U r = static_cast<U>(alpha) * acc;
      if (beta != 0) r += static_cast<U>(beta) * static_cast<U>(static_cast<int64_t>(dst));
      dst = static_cast<T>(r);
    }
  }
}

// Multiply-adds below which one GEMM is too small for OpenBLAS's own threads to pay off.
constexpr int64_t kSmallGemm = 64 * 64 * 64;

// out, a, b: 3-D of dtype T, out's and the operands' matrices in a BLAS layout; k > 0.
template <typename T>
void batched_blas(const Tensor& out, const Tensor& a, const Tensor& b, T alpha, T beta) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  T* pc = out.data_ptr<T>();
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      blas_gemm<T>(m, n, k, alpha, pa + i * a.stride(0), a.stride(1), a.stride(2),
                   pb + i * b.stride(0), b.stride(1), b.stride(2), beta, pc + i * out.stride(0),
                   out.stride(1), out.stride(2));
    }
  };
  const int64_t work = m * n * k;
  const int threads = get_num_threads();
  if (batch > 1 && work < kSmallGemm && threads > 1 && !in_parallel_region()) {
    // Many small products: one thread each, kiln's pool over the batch.
    set_blas_threads(1);
    parallel_for(0, batch, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work)), run);
  } else {
    set_blas_threads(in_parallel_region() ? 1 : threads);
    run(0, batch);
  }
}

template <typename T>
void batched_loop(const Tensor& out, const Tensor& a, const Tensor& b, int64_t alpha,
                  int64_t beta) {
  const int64_t m = out.size(1), n = out.size(2), k = a.size(2);
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  T* pc = out.data_ptr<T>();
  parallel_for(0, out.size(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      loop_gemm<T>(m, n, k, alpha, pa + i * a.stride(0), a.stride(1), a.stride(2),
                   pb + i * b.stride(0), b.stride(1), b.stride(2), beta, pc + i * out.stride(0),
                   out.stride(1), out.stride(2));
    }
  });
}

bool is_zero(const Scalar& s) { return s.to<double>() == 0.0; }

// Multiply-adds from which a product goes through oneDNN's matmul primitive rather than sgemm.
constexpr int64_t kMatmulPrimitiveWork = 64 * 64 * 64;

bool row_major(const Tensor& t) {
  const auto l = blas_layout(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1));
  return l && !l->transposed;
}

// out = alpha * a @ b + beta * out (+ bias) through the matmul primitive; false (nothing done)
// where sgemm is the better kernel. 3-D float32 operands, k > 0, out in a BLAS layout.
//
// Only for a row-major a and out and a column-major b, which is a linear layer's x @ weight.t():
// there oneDNN 2.6's brgemm kernels run 0.66-1.07x sgemm's time, while with a row-major b they
// repack it on every call and take up to 2.9x as long (256x3072x768: 11.3 vs 4.5 ms; docs/PERF.md).
bool gemm_onednn(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor* bias,
                 const Scalar& alpha, const Scalar& beta) {
  if (out.dtype() != DType::Float32 || a.dtype() != DType::Float32 || b.dtype() != DType::Float32) {
    return false;
  }
  if (out.size(1) * out.size(2) * a.size(2) < kMatmulPrimitiveWork) return false;
  if (!row_major(out) || !row_major(a) || !row_major(b.transpose(1, 2))) return false;
  return onednn_matmul(out, a, b, bias, alpha.to<float>(), beta.to<float>());
}

// 3-D out/a/b of one float32/float64/integer dtype, k > 0.
void gemm_3d(const Tensor& out, const Tensor& a_in, const Tensor& b_in, const Scalar& alpha,
             const Scalar& beta) {
  const DType dtype = out.dtype();
  if (dtype == DType::Float16 || dtype == DType::BFloat16) {
    // Compute in float32 and round once at the end.
    Tensor c32 = is_zero(beta) ? empty(out.sizes(), TensorOptions(kFloat32))
                               : kiln::to(out, kFloat32, /*copy=*/true);
    gemm_3d(c32, kiln::to(a_in, kFloat32), kiln::to(b_in, kFloat32), alpha, beta);
    Tensor dst = out;
    dst.copy_(c32);
    return;
  }
  const bool uses_blas = dtype == DType::Float32 || dtype == DType::Float64;
  Tensor a = uses_blas && !blas_ready(a_in) ? a_in.contiguous() : a_in;
  Tensor b = uses_blas && !blas_ready(b_in) ? b_in.contiguous() : b_in;
  const bool direct = !uses_blas || blas_ready(out);
  Tensor c =
      direct ? out : (is_zero(beta) ? empty(out.sizes(), TensorOptions(dtype)) : out.contiguous());
  if (dtype == DType::Float32) {
    if (!gemm_onednn(c, a, b, nullptr, alpha, beta)) {
      batched_blas<float>(c, a, b, alpha.to<float>(), beta.to<float>());
    }
  } else if (dtype == DType::Float64) {
    batched_blas<double>(c, a, b, alpha.to<double>(), beta.to<double>());
  } else {
    KILN_DISPATCH_INTEGRAL(dtype, "gemm", [&]<typename scalar_t>() {
      batched_loop<scalar_t>(c, a, b, alpha.to<int64_t>(), beta.to<int64_t>());
    });
  }
  if (!direct) {
    Tensor dst = out;
    dst.copy_(c);
  }
}

}  // namespace

void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha,
               const Scalar& beta) {
  if (out.numel() == 0) return;
  Tensor dst = out;
  if (a.size(-1) == 0) {
    // No products to sum: out = beta * out, without reading out when beta is zero.
    if (is_zero(beta)) {
      dst.zero_();
    } else {
      dst.mul_(beta);
    }
    return;
  }
  if (out.dim() == 2) {
    gemm_3d(out.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0), alpha, beta);
  } else {
    gemm_3d(out, a, b, alpha, beta);
  }
}

void gemm_bias_into(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias) {
  if (out.numel() == 0) return;
  const Tensor bias_row = bias.dim() == 2 ? bias.squeeze(0) : bias;
  if (a.size(-1) > 0 && bias.dtype() == DType::Float32 && bias_row.dim() == 1 &&
      bias_row.size(0) == out.size(-1) && bias_row.stride(0) == 1) {
    const auto as3 = [](const Tensor& t) { return t.dim() == 2 ? t.unsqueeze(0) : t; };
    if (gemm_onednn(as3(out), as3(a), as3(b), &bias_row, 1, 0)) return;
  }
  Tensor dst = out;
  dst.copy_(bias.expand(out.sizes()));
  gemm_into(out, a, b, 1, 1);
}

}  // namespace kiln::ops::linalg
