// Tiled ("flash") attention: each task takes one (batch, head, block of query rows), walks the
// keys in blocks, computes that block's scores with one small GEMM, and folds them into a running
// row max and row sum (online softmax) while accumulating the output block with a second GEMM.
// Memory per thread is a few blocks; the [L, S] score matrix is never formed.
#include "ops/attention/attention_kernels.h"
#include "ops/cpu/vec.h"

#include <kiln/core/parallel.h>

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <limits>
#include <vector>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

// Query rows per task (smaller when there are few tasks per thread) and keys per block: a block
// of scores (64 x 512 floats, 128 KiB) stays in L2 next to the output block.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kMinQueryBlock = 16;
constexpr int64_t kKeyBlock = 512;

// Row-major cblas product C = alpha * op(A) @ op(B) + beta * C.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const auto ta = trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = trans_b ? CblasTrans : CblasNoTrans;
  const auto i = [](int64_t v) {
    KILN_CHECK(v <= INT_MAX, "scaled_dot_product_attention: size {} exceeds what BLAS can index",
               v);
    return static_cast<int>(v);
  };
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, i(m), i(n), i(k), alpha, a, i(lda), b, i(ldb), beta, c,
                i(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, i(m), i(n), i(k), alpha, a, i(lda), b, i(ldb), beta, c,
                i(ldc));
  }
}

// A rows x cols matrix whose element (r, c) is data[r * rs + c * cs].
template <typename T>
struct StridedMatrix {
  const T* data;
  int64_t rows, cols, rs, cs;
};

// The same matrix as cblas reads it: row-major with leading dimension ld, or transposed.
template <typename T>
struct BlasOperand {
  const T* data;
  int64_t ld;
  bool transposed;
};

// Passes the matrix through when one of its strides is 1; otherwise packs it into `scratch`.
template <typename T>
BlasOperand<T> blas_operand(const StridedMatrix<T>& m, std::vector<T>& scratch) {
  if (m.cs == 1 && (m.rows == 1 || m.rs >= m.cols)) {
    return {m.data, std::max<int64_t>(1, m.rows == 1 ? m.cols : m.rs), false};
  }
  if (m.rs == 1 && (m.cols == 1 || m.cs >= m.rows)) {
    return {m.data, std::max<int64_t>(1, m.cols == 1 ? m.rows : m.cs), true};
  }
  scratch.resize(static_cast<size_t>(m.rows * m.cols));
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) scratch[r * m.cols + c] = m.data[r * m.rs + c * m.cs];
  }
  return {scratch.data(), std::max<int64_t>(1, m.cols), false};
}

// C (m x n, ld ldc) = alpha * A @ B + beta * C, with A and B strided; K = 0 gives beta * C.
template <typename T>
void strided_gemm(const StridedMatrix<T>& a, const StridedMatrix<T>& b, T alpha, T beta, T* c,
                  int64_t ldc, std::vector<T>& scratch_a, std::vector<T>& scratch_b) {
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) c[r * ldc + j] = beta == T(0) ? T(0) : beta * c[r * ldc + j];
    }
    return;
  }
  BlasOperand<T> oa = blas_operand(a, scratch_a);
  BlasOperand<T> ob = blas_operand(b, scratch_b);
  gemm<T>(oa.transposed, ob.transposed, m, n, k, alpha, oa.data, oa.ld, ob.data, ob.ld, beta, c,
          ldc);
}

template <typename T>
T row_max(const T* s, int64_t n) {
  constexpr int W = Vec<T>::size;
  T mx = -std::numeric_limits<T>::infinity();
  int64_t c = 0;
  if (n >= W) {
    Vec<T> vm(mx);
    for (; c + W <= n; c += W) vm = maximum(vm, Vec<T>::loadu(s + c));
    for (int i = 0; i < W; ++i) mx = (vm[i] > mx || std::isnan(vm[i])) ? vm[i] : mx;
  }
  for (; c < n; ++c) mx = (s[c] > mx || std::isnan(s[c])) ? s[c] : mx;
  return mx;
}

// s[c] = exp(s[c] - max) for c < n; returns their sum.
template <typename T>
T exp_and_sum(T* s, int64_t n, T max) {
  constexpr int W = Vec<T>::size;
  Vec<T> vmax(max), vsum(T(0));
  int64_t c = 0;
  for (; c + W <= n; c += W) {
    Vec<T> p = exp(Vec<T>::loadu(s + c) - vmax);
    p.storeu(s + c);
    vsum = vsum + p;
  }
  T sum = reduce_add(vsum);
  for (; c < n; ++c) {
    s[c] = std::exp(s[c] - max);
    sum += s[c];
  }
  return sum;
}

template <typename T>
void scale_row(T* x, int64_t n, T factor) {
  constexpr int W = Vec<T>::size;
  Vec<T> f(factor);
  int64_t c = 0;
  for (; c + W <= n; c += W) (Vec<T>::loadu(x + c) * f).storeu(x + c);
  for (; c < n; ++c) x[c] *= factor;
}

// Applies attn_mask to one row of n scores: bool false -> -inf, float added.
template <typename T, typename M>
void apply_mask(T* s, int64_t n, const M* m, int64_t stride) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  if constexpr (std::is_same_v<M, bool>) {
    if (stride == 1) {
      for (int64_t c = 0; c < n; ++c) s[c] = m[c] ? s[c] : kNegInf;
    } else {
      for (int64_t c = 0; c < n; ++c) s[c] = m[c * stride] ? s[c] : kNegInf;
    }
  } else {
    if (stride == 1) {
      for (int64_t c = 0; c < n; ++c) s[c] += m[c];
    } else {
      for (int64_t c = 0; c < n; ++c) s[c] += m[c * stride];
    }
  }
}

// Zeroes the weights that dropout drops: word `first + c` of the Philox stream decides column c.
template <typename T>
void apply_dropout(T* p, int64_t n, uint64_t first, uint64_t threshold,
                   const random_detail::PhiloxStream& stream) {
  random_detail::PhiloxBlock block{};
  uint64_t block_index = ~uint64_t{0};
  for (int64_t c = 0; c < n; ++c) {
    const uint64_t word = first + static_cast<uint64_t>(c);
    if (word / 4 != block_index) {
      block_index = word / 4;
      block = random_detail::philox_block(stream.offset + block_index, 0, stream.seed);
    }
    if (block[word % 4] < threshold) p[c] = T(0);
  }
}

// Per-thread buffers, sized for one task.
template <typename T>
struct Scratch {
  std::vector<T> scores, acc, row_max, row_sum, packed_q, packed_k, packed_v;
};

template <typename T>
class FlashAttention {
 public:
  explicit FlashAttention(const ops::FlashAttentionArgs& a)
      : a_(a),
        batch_(a.q.size(0)),
        q_heads_(a.q.size(1)),
        q_len_(a.q.size(2)),
        head_dim_(a.q.size(3)),
        k_groups_(a.q.size(1) / a.k.size(1)),
        v_groups_(a.q.size(1) / a.v.size(1)),
        kv_len_(a.k.size(2)),
        value_dim_(a.v.size(3)),
        q_(a.q.data_ptr<T>()),
        k_(a.k.data_ptr<T>()),
        v_(a.v.data_ptr<T>()),
        out_(a.out.data_ptr<T>()),
        lse_(a.lse.data_ptr<T>()) {
    dropout_threshold_ = static_cast<uint64_t>(a.dropout_p * 4294967296.0);
    dropout_scale_ = a.dropout_p > 0 ? T(1.0 / (1.0 - a.dropout_p)) : T(1);
  }

  void run() {
    const int64_t heads = batch_ * q_heads_;
    if (heads == 0 || q_len_ == 0) return;
    const int threads = get_num_threads();
    query_block_ = std::min(kQueryBlock, q_len_);
    while (query_block_ > kMinQueryBlock &&
           heads * ceil_div(q_len_, query_block_) < 4 * static_cast<int64_t>(threads)) {
      query_block_ /= 2;
    }
    key_block_ = std::min(kKeyBlock, kv_len_);
    query_blocks_ = ceil_div(q_len_, query_block_);
    const int64_t tasks = heads * query_blocks_;
    // Tasks are handed out one at a time, so causal tasks of unequal cost still balance.
    std::atomic<int64_t> next{0};
    const int64_t workers = std::min<int64_t>(threads, tasks);
    parallel_for(0, workers, 1, [&](int64_t, int64_t) {
      Scratch<T> scratch;
      scratch.scores.resize(static_cast<size_t>(query_block_ * std::max<int64_t>(1, key_block_)));
      scratch.acc.resize(static_cast<size_t>(query_block_ * value_dim_));
      scratch.row_max.resize(static_cast<size_t>(query_block_));
      scratch.row_sum.resize(static_cast<size_t>(query_block_));
      for (int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) run_task(t, scratch);
    });
  }

 private:
  static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

  void run_task(int64_t task, Scratch<T>& s) {
    // Causal: the last query blocks cost the most, so they go first.
    const int64_t heads = batch_ * q_heads_;
    int64_t bh, qb;
    if (a_.is_causal) {
      qb = query_blocks_ - 1 - task / heads;
      bh = task % heads;
    } else {
      bh = task / query_blocks_;
      qb = task % query_blocks_;
    }
    const int64_t b = bh / q_heads_, h = bh % q_heads_;
    const int64_t i0 = qb * query_block_;
    const int64_t rows = std::min(query_block_, q_len_ - i0);
    const Tensor &q = a_.q, &k = a_.k, &v = a_.v;

    const StridedMatrix<T> q_block{q_ + b * q.stride(0) + h * q.stride(1) + i0 * q.stride(2), rows,
                                   head_dim_, q.stride(2), q.stride(3)};
    const T* k_head = k_ + b * k.stride(0) + (h / k_groups_) * k.stride(1);
    const T* v_head = v_ + b * v.stride(0) + (h / v_groups_) * v.stride(1);

    T* acc = s.acc.data();
    std::fill(acc, acc + rows * value_dim_, T(0));
    std::fill(s.row_max.begin(), s.row_max.end(), -std::numeric_limits<T>::infinity());
    std::fill(s.row_sum.begin(), s.row_sum.end(), T(0));

    // Query row i attends keys j <= i when causal: no key block past the block's last row.
    const int64_t key_end = a_.is_causal ? std::min(kv_len_, i0 + rows) : kv_len_;
    for (int64_t j0 = 0; j0 < key_end; j0 += key_block_) {
      const int64_t cols = std::min(key_block_, key_end - j0);
      T* scores = s.scores.data();
      // scores = scale * q_block @ k_block^T
      const StridedMatrix<T> k_block_t{k_head + j0 * k.stride(2), head_dim_, cols, k.stride(3),
                                       k.stride(2)};
      strided_gemm<T>(q_block, k_block_t, static_cast<T>(a_.scale), T(0), scores, cols, s.packed_q,
                      s.packed_k);
      for (int64_t r = 0; r < rows; ++r) softmax_step(s, b, h, i0 + r, r, j0, cols);
      // acc += weights @ v_block
      const StridedMatrix<T> weights{scores, rows, cols, cols, 1};
      const StridedMatrix<T> v_block{v_head + j0 * v.stride(2), cols, value_dim_, v.stride(2),
                                     v.stride(3)};
      std::vector<T> unused;
      strided_gemm<T>(weights, v_block, T(1), T(1), acc, value_dim_, unused, s.packed_v);
    }
    write_rows(s, b, h, i0, rows);
  }

  // Folds row r (query i) of the scores of keys [j0, j0 + cols) into the running max and sum,
  // turning the scores into unnormalized weights, and rescales that row's accumulated output.
  void softmax_step(Scratch<T>& s, int64_t b, int64_t h, int64_t i, int64_t r, int64_t j0,
                    int64_t cols) {
    T* row = s.scores.data() + r * cols;
    // Keys past the diagonal take no part: only the first n columns are live.
    const int64_t n = a_.is_causal ? std::clamp<int64_t>(i - j0 + 1, 0, cols) : cols;
    const Tensor& mask = a_.mask;
    if (mask.defined() && n > 0) {
      const int64_t offset =
          b * mask.stride(0) + h * mask.stride(1) + i * mask.stride(2) + j0 * mask.stride(3);
      if (mask.dtype() == DType::Bool) {
        apply_mask<T, bool>(row, n, mask.data_ptr<bool>() + offset, mask.stride(3));
      } else {
        apply_mask<T, T>(row, n, mask.data_ptr<T>() + offset, mask.stride(3));
      }
    }
    T& running_max = s.row_max[r];
    const T block_max = row_max(row, n);
    const T new_max = block_max > running_max || std::isnan(block_max) ? block_max : running_max;
    if (new_max == -std::numeric_limits<T>::infinity()) {
      // Every key so far is masked out: nothing to add.
      std::fill(row, row + cols, T(0));
      return;
    }
    const T sum = exp_and_sum(row, n, new_max);
    std::fill(row + n, row + cols, T(0));
    const T correction = std::exp(running_max - new_max);
    s.row_sum[r] = s.row_sum[r] * correction + sum;
    if (correction != T(1)) scale_row(s.acc.data() + r * value_dim_, value_dim_, correction);
    running_max = new_max;
    if (a_.dropout_p > 0) {
      const uint64_t first =
          static_cast<uint64_t>(((b * q_heads_ + h) * q_len_ + i) * kv_len_ + j0);
      apply_dropout(row, n, first, dropout_threshold_, a_.dropout_stream);
    }
  }

  // out = acc / sum and lse = max + log(sum); a row with no key gives 0 for both, as aten does.
  void write_rows(Scratch<T>& s, int64_t b, int64_t h, int64_t i0, int64_t rows) {
    const Tensor &out = a_.out, &lse = a_.lse;
    for (int64_t r = 0; r < rows; ++r) {
      const T sum = s.row_sum[r];
      const T* acc = s.acc.data() + r * value_dim_;
      T* o = out_ + b * out.stride(0) + h * out.stride(1) + (i0 + r) * out.stride(2);
      const int64_t os = out.stride(3);
      const T factor = sum == T(0) ? T(0) : dropout_scale_ / sum;
      for (int64_t c = 0; c < value_dim_; ++c) o[c * os] = acc[c] * factor;
      lse_[b * lse.stride(0) + h * lse.stride(1) + (i0 + r) * lse.stride(2)] =
          sum == T(0) ? T(0) : s.row_max[r] + std::log(sum);
    }
  }

  const ops::FlashAttentionArgs& a_;
  const int64_t batch_, q_heads_, q_len_, head_dim_, k_groups_, v_groups_, kv_len_, value_dim_;
  const T *q_, *k_, *v_;
  T *out_, *lse_;
  int64_t query_block_ = kQueryBlock, key_block_ = kKeyBlock, query_blocks_ = 0;
  uint64_t dropout_threshold_ = 0;
  T dropout_scale_ = T(1);
};

void flash_attention_kernel(const ops::FlashAttentionArgs& args) {
  if (args.q.dtype() == DType::Float64) {
    FlashAttention<double>(args).run();
  } else {
    FlashAttention<float>(args).run();
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::flash_attention_kernels, &flash_attention_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
