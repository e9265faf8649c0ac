// Tiled ("flash") attention: each task takes one (batch, head, block of query rows), walks the
// keys in blocks, computes that block's scores with one small GEMM, and folds them into a running
// max and sum per query (online softmax) while accumulating the output block with a second GEMM.
// Memory per thread is a few blocks; the [L, S] score matrix is never formed.
//
// The GEMMs are a register-tiled SIMD micro-kernel here rather than BLAS calls: blocks are small
// (64 x 256 x 64), and BLAS would pack both operands on every call. Scores are kept transposed
// (one row per key, queries across the SIMD lanes): the first GEMM then reads keys in any layout
// as broadcast scalars against the task's queries packed once, the softmax runs across queries
// with whole vectors, and the second GEMM reads value rows in place.
#include "ops/attention/attention_kernels.h"
#include "ops/cpu/vec.h"

#include <kiln/core/parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

// Query rows per task (smaller when there are few tasks per thread) and keys per block: a block
// of transposed scores (256 keys x 64 queries) and the value block stay in L2.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kMinQueryBlock = 16;
constexpr int64_t kKeyBlock = 256;

// Register tile of the micro-kernel: kTileRows rows of C by kTileVecs vectors of columns (24
// accumulators of 32 AVX-512 registers; 8 of 16 on AVX2 and SSE).
constexpr int kTileRows = kVecBytes == 64 ? 6 : 4;
constexpr int kTileVecs = kVecBytes == 64 ? 4 : 2;

// x in every lane, one broadcast instruction.
template <typename T>
inline Vec<T> splat(T x) {
#if defined(KILN_CPU_CAPABILITY_AVX512)
  if constexpr (std::is_same_v<T, float>) return Vec<T>(_mm512_set1_ps(x));
  if constexpr (std::is_same_v<T, double>) return Vec<T>(_mm512_set1_pd(x));
#elif defined(KILN_CPU_CAPABILITY_AVX2)
  if constexpr (std::is_same_v<T, float>) return Vec<T>(_mm256_set1_ps(x));
  if constexpr (std::is_same_v<T, double>) return Vec<T>(_mm256_set1_pd(x));
#else
  if constexpr (std::is_same_v<T, float>) return Vec<T>(_mm_set1_ps(x));
  if constexpr (std::is_same_v<T, double>) return Vec<T>(_mm_set1_pd(x));
#endif
}

// Lane-wise max, one maxps (no NaN bookkeeping: a NaN score still makes a NaN weight).
template <typename T>
inline Vec<T> fast_max(Vec<T> a, Vec<T> b) {
  return a.v > b.v ? a.v : b.v;
}

// exp(x) for the weights, x <= 0: Cephes' expf polynomial on x - n ln2 (about 1 ulp over the
// range), scaled by 2^n through the exponent bits; below -87 (exp < 2^-126) it gives 0, so that
// -inf (a masked score) gives exactly 0. Faster than SLEEF's u10 exp, which the softmax needed
// per score. float64 keeps SLEEF.
inline Vec<float> weight_exp(Vec<float> x) {
  typedef int32_t IntV __attribute__((vector_size(kVecBytes)));
  const Vec<float> magic = splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const Vec<float> xc = minimum(x, splat(88.0f));
  const Vec<float> t = fmadd(xc, splat(1.44269504088896341f), magic);
  const Vec<float> n = t - magic;
  Vec<float> r = fmadd(n, splat(-0.693359375f), xc);
  r = fmadd(n, splat(2.12194440e-4f), r);
  Vec<float> p = splat(1.9875691500e-4f);
  p = fmadd(p, r, splat(1.3981999507e-3f));
  p = fmadd(p, r, splat(8.3334519073e-3f));
  p = fmadd(p, r, splat(4.1665795894e-2f));
  p = fmadd(p, r, splat(1.6666665459e-1f));
  p = fmadd(p, r, splat(5.0000001201e-1f));
  const Vec<float> y = fmadd(p, r * r, r + splat(1.0f));
  const IntV bits = ((IntV)t.v - 0x4B400000 + 127) << 23;
  const Vec<float> result = y * Vec<float>((Vec<float>::V)bits);
  return select<float>(x < splat(-87.0f), splat(0.0f), result);
}
inline Vec<double> weight_exp(Vec<double> x) { return exp(x); }

// C[MR x NV*W] = (C +) A[MR x k] @ B[k x NV*W]: A strided (element (r, p) at a[r*ars + p*acs],
// read as broadcast scalars), B's rows contiguous (leading dim ldb), C's rows contiguous (ldc).
// kColMax: also col_max[0, NV*W) = max(col_max, max over the tile's rows) (the softmax's block
// max, taken while the tile is still in registers).
template <typename T, int MR, int NV, bool kAccumulate, bool kColMax>
void gemm_tile(int64_t k, const T* a, int64_t ars, int64_t acs, const T* b, int64_t ldb, T* c,
               int64_t ldc, T* col_max) {
  constexpr int W = Vec<T>::size;
  Vec<T> acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < NV; ++j) {
      acc[r][j] = kAccumulate ? Vec<T>::loadu(c + r * ldc + j * W) : splat(T(0));
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    Vec<T> bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = Vec<T>::loadu(b + p * ldb + j * W);
    for (int r = 0; r < MR; ++r) {
      const Vec<T> av = splat(a[r * ars + p * acs]);
      for (int j = 0; j < NV; ++j) acc[r][j] = fmadd(av, bv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < NV; ++j) acc[r][j].storeu(c + r * ldc + j * W);
  }
  if constexpr (kColMax) {
    for (int j = 0; j < NV; ++j) {
      Vec<T> m = Vec<T>::loadu(col_max + j * W);
      for (int r = 0; r < MR; ++r) m = fast_max(m, acc[r][j]);
      m.storeu(col_max + j * W);
    }
  }
}

template <typename T>
using TileFn = void (*)(int64_t, const T*, int64_t, int64_t, const T*, int64_t, T*, int64_t, T*);

// tiles[mr - 1][nv - 1] for every tail shape.
template <typename T, bool kAccumulate, bool kColMax>
struct TileTable {
  TileFn<T> fn[kTileRows][kTileVecs];
  constexpr TileTable() : fn{} { fill(std::make_integer_sequence<int, kTileRows * kTileVecs>{}); }
  template <int... I>
  constexpr void fill(std::integer_sequence<int, I...>) {
    ((fn[I / kTileVecs][I % kTileVecs] =
          &gemm_tile<T, I / kTileVecs + 1, I % kTileVecs + 1, kAccumulate, kColMax>),
     ...);
  }
};

// C (m x n) = (C +) A (m x k) @ B (k x n), n a multiple of the vector width; see gemm_tile.
template <typename T, bool kAccumulate, bool kColMax = false>
void small_gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b,
                int64_t ldb, T* c, int64_t ldc, T* col_max = nullptr) {
  static constexpr TileTable<T, kAccumulate, kColMax> tiles;
  constexpr int W = Vec<T>::size;
  for (int64_t c0 = 0; c0 < n; c0 += kTileVecs * W) {
    const int nv = static_cast<int>(std::min<int64_t>(kTileVecs, (n - c0) / W));
    for (int64_t r0 = 0; r0 < m; r0 += kTileRows) {
      const int mr = static_cast<int>(std::min<int64_t>(kTileRows, m - r0));
      tiles.fn[mr - 1][nv - 1](k, a + r0 * ars, ars, acs, b + c0, ldb, c + r0 * ldc + c0, ldc,
                               kColMax ? col_max + c0 : nullptr);
    }
  }
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Per-thread buffers, sized for one task.
template <typename T>
struct Scratch {
  std::vector<T> q_t;      // [E, Mp] the task's queries, transposed and scaled
  std::vector<T> scores;   // [key block, Mp] scores transposed: one row per key
  std::vector<T> acc;      // [M, Evp] unnormalized output rows
  std::vector<T> v_block;  // [key block, Evp] value rows when they need packing
  std::vector<T> row_max, row_sum, correction, block_max;  // [Mp] per query
};

template <typename T>
class FlashAttention {
  static constexpr int W = Vec<T>::size;
  static constexpr T kNegInf = -std::numeric_limits<T>::infinity();

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
        value_pad_(round_up(a.v.size(3), W)),
        q_(a.q.data_ptr<T>()),
        k_(a.k.data_ptr<T>()),
        v_(a.v.data_ptr<T>()),
        out_(a.out.data_ptr<T>()),
        lse_(a.lse.data_ptr<T>()) {
    dropout_threshold_ = static_cast<uint64_t>(a.dropout_p * 4294967296.0);
    dropout_scale_ = a.dropout_p > 0 ? T(1.0 / (1.0 - a.dropout_p)) : T(1);
    // Value rows feed the micro-kernel directly when contiguous and a whole number of vectors.
    direct_v_ = a.v.stride(3) == 1 && value_dim_ % W == 0;
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
    query_pad_ = round_up(query_block_, W);
    key_block_ = std::min(kKeyBlock, kv_len_);
    query_blocks_ = ceil_div(q_len_, query_block_);
    const int64_t tasks = heads * query_blocks_;
    // Tasks are handed out one at a time, so causal tasks of unequal cost still balance.
    std::atomic<int64_t> next{0};
    const int64_t workers = std::min<int64_t>(threads, tasks);
    parallel_for(0, workers, 1, [&](int64_t, int64_t) {
      Scratch<T> s;
      s.q_t.resize(static_cast<size_t>(head_dim_ * query_pad_));
      s.scores.resize(static_cast<size_t>(std::max<int64_t>(1, key_block_) * query_pad_));
      s.acc.resize(static_cast<size_t>(query_block_ * value_pad_));
      if (!direct_v_) s.v_block.resize(static_cast<size_t>(key_block_ * value_pad_));
      s.row_max.resize(static_cast<size_t>(query_pad_));
      s.row_sum.resize(static_cast<size_t>(query_pad_));
      s.correction.resize(static_cast<size_t>(query_pad_));
      s.block_max.resize(static_cast<size_t>(query_pad_));
      for (int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) run_task(t, s);
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
    const int64_t mp = query_pad_;

    // q_t[e][r] = scale * q[i0 + r][e], zero-padded to mp queries.
    const int64_t qs2 = q.stride(2), qs3 = q.stride(3);
    const T* q_rows = q_ + b * q.stride(0) + h * q.stride(1) + i0 * qs2;
    const T scale = static_cast<T>(a_.scale);
    for (int64_t e = 0; e < head_dim_; ++e) {
      T* dst = s.q_t.data() + e * mp;
      for (int64_t r = 0; r < rows; ++r) dst[r] = q_rows[r * qs2 + e * qs3] * scale;
      std::fill(dst + rows, dst + mp, T(0));
    }
    const T* k_head = k_ + b * k.stride(0) + (h / k_groups_) * k.stride(1);
    const T* v_head = v_ + b * v.stride(0) + (h / v_groups_) * v.stride(1);

    std::fill(s.acc.begin(), s.acc.end(), T(0));
    std::fill(s.row_max.begin(), s.row_max.end(), kNegInf);
    std::fill(s.row_sum.begin(), s.row_sum.end(), T(0));

    // Query i attends keys j <= i when causal: no key block past the block's last query.
    const int64_t key_end = a_.is_causal ? std::min(kv_len_, i0 + rows) : kv_len_;
    for (int64_t j0 = 0; j0 < key_end; j0 += key_block_) {
      const int64_t n = std::min(key_block_, key_end - j0);
      T* st = s.scores.data();
      // st[jj][r] = k[j0 + jj] . q_t[:, r]
      // Unmasked blocks take their max inside the GEMM; masked ones after masking.
      const bool masked = a_.mask.defined() || (a_.is_causal && j0 + n - 1 > i0);
      const T* a_keys = k_head + j0 * k.stride(2);
      if (masked) {
        small_gemm<T, false>(n, mp, head_dim_, a_keys, k.stride(2), k.stride(3), s.q_t.data(), mp,
                             st, mp);
        mask_scores(st, b, h, i0, rows, j0, n);
        block_max(s, n);
      } else {
        std::fill(s.block_max.begin(), s.block_max.end(), kNegInf);
        small_gemm<T, false, true>(n, mp, head_dim_, a_keys, k.stride(2), k.stride(3), s.q_t.data(),
                                   mp, st, mp, s.block_max.data());
      }
      online_softmax(s, rows, n);
      if (a_.dropout_p > 0) dropout(st, b, h, i0, rows, j0, n);
      // acc[r] += sum_jj st[jj][r] * v[j0 + jj]
      const T* vb = v_head + j0 * v.stride(2);
      int64_t ldv = v.stride(2);
      if (!direct_v_) {
        pack_values(s.v_block.data(), vb, n);
        vb = s.v_block.data();
        ldv = value_pad_;
      }
      small_gemm<T, true>(rows, value_pad_, n, st, 1, mp, vb, ldv, s.acc.data(), value_pad_);
    }
    write_rows(s, b, h, i0, rows);
  }

  // Adds attn_mask (bool false -> -inf) and the causal mask to the transposed scores.
  void mask_scores(T* st, int64_t b, int64_t h, int64_t i0, int64_t rows, int64_t j0,
                   int64_t n) const {
    const int64_t mp = query_pad_;
    const Tensor& mask = a_.mask;
    if (mask.defined()) {
      const int64_t ms2 = mask.stride(2), ms3 = mask.stride(3);
      const int64_t base = b * mask.stride(0) + h * mask.stride(1) + i0 * ms2 + j0 * ms3;
      for (int64_t jj = 0; jj < n; ++jj) {
        T* row = st + jj * mp;
        if (mask.dtype() == DType::Bool) {
          const bool* m = mask.data_ptr<bool>() + base + jj * ms3;
          for (int64_t r = 0; r < rows; ++r) row[r] = m[r * ms2] ? row[r] : kNegInf;
        } else {
          const T* m = mask.data_ptr<T>() + base + jj * ms3;
          for (int64_t r = 0; r < rows; ++r) row[r] += m[r * ms2];
        }
      }
    }
    if (a_.is_causal) {
      // Key j is hidden from queries i < j: a prefix of its row.
      for (int64_t jj = 0; jj < n; ++jj) {
        const int64_t hidden = std::min(rows, j0 + jj - i0);
        if (hidden > 0) std::fill(st + jj * mp, st + jj * mp + hidden, kNegInf);
      }
    }
  }

  // Folds n rows of transposed scores into each query's running max and sum, turning them into
  // unnormalized weights, and rescales the queries' accumulated outputs.
  // s.block_max = max over the n rows of transposed scores, per query.
  void block_max(Scratch<T>& s, int64_t n) const {
    const int64_t mp = query_pad_;
    const T* st = s.scores.data();
    for (int64_t c = 0; c < mp; c += W) {
      Vec<T> m = splat(kNegInf);
      for (int64_t jj = 0; jj < n; ++jj) m = fast_max(m, Vec<T>::loadu(st + jj * mp + c));
      m.storeu(s.block_max.data() + c);
    }
  }

  void online_softmax(Scratch<T>& s, int64_t rows, int64_t n) {
    const int64_t mp = query_pad_;
    T* st = s.scores.data();
    for (int64_t c = 0; c < mp; c += W) {
      const Vec<T> block_max = Vec<T>::loadu(s.block_max.data() + c);
      const Vec<T> old_max = Vec<T>::loadu(s.row_max.data() + c);
      const Vec<T> new_max = fast_max(old_max, block_max);
      // Queries with no key yet subtract 0 instead of -inf (exp(-inf) = 0, never NaN).
      const Vec<T> base = select<T>(new_max == Vec<T>(kNegInf), Vec<T>(T(0)), new_max);
      Vec<T> sum(T(0));
      for (int64_t jj = 0; jj < n; ++jj) {
        T* p = st + jj * mp + c;
        const Vec<T> w = weight_exp(Vec<T>::loadu(p) - base);
        w.storeu(p);
        sum = sum + w;
      }
      const Vec<T> correction = weight_exp(old_max - base);
      (Vec<T>::loadu(s.row_sum.data() + c) * correction + sum).storeu(s.row_sum.data() + c);
      new_max.storeu(s.row_max.data() + c);
      correction.storeu(s.correction.data() + c);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const T f = s.correction[r];
      if (f == T(1)) continue;
      T* x = s.acc.data() + r * value_pad_;
      for (int64_t c = 0; c < value_pad_; c += W) (Vec<T>::loadu(x + c) * Vec<T>(f)).storeu(x + c);
    }
  }

  // Zeroes dropped weights: word ((b * Hq + h) * L + i) * S + j of the stream decides (i, j).
  void dropout(T* st, int64_t b, int64_t h, int64_t i0, int64_t rows, int64_t j0, int64_t n) const {
    const auto& stream = a_.dropout_stream;
    for (int64_t r = 0; r < rows; ++r) {
      const uint64_t first =
          static_cast<uint64_t>(((b * q_heads_ + h) * q_len_ + i0 + r) * kv_len_ + j0);
      random_detail::PhiloxBlock block{};
      uint64_t block_index = ~uint64_t{0};
      for (int64_t jj = 0; jj < n; ++jj) {
        const uint64_t word = first + static_cast<uint64_t>(jj);
        if (word / 4 != block_index) {
          block_index = word / 4;
          block = random_detail::philox_block(stream.offset + block_index, 0, stream.seed);
        }
        if (block[word % 4] < dropout_threshold_) st[jj * query_pad_ + r] = T(0);
      }
    }
  }

  // Value rows [n, Ev] (any strides) into dst [n, Evp], zero-padded.
  void pack_values(T* dst, const T* src, int64_t n) const {
    const int64_t s2 = a_.v.stride(2), s3 = a_.v.stride(3);
    for (int64_t jj = 0; jj < n; ++jj) {
      T* d = dst + jj * value_pad_;
      for (int64_t c = 0; c < value_dim_; ++c) d[c] = src[jj * s2 + c * s3];
      std::fill(d + value_dim_, d + value_pad_, T(0));
    }
  }

  // out = acc / sum and lse = max + log(sum); a row with no key gives 0 for both, as aten does.
  void write_rows(Scratch<T>& s, int64_t b, int64_t h, int64_t i0, int64_t rows) {
    const Tensor &out = a_.out, &lse = a_.lse;
    for (int64_t r = 0; r < rows; ++r) {
      const T sum = s.row_sum[r];
      const T* acc = s.acc.data() + r * value_pad_;
      T* o = out_ + b * out.stride(0) + h * out.stride(1) + (i0 + r) * out.stride(2);
      const int64_t os = out.stride(3);
      const T factor = sum == T(0) ? T(0) : dropout_scale_ / sum;
      for (int64_t c = 0; c < value_dim_; ++c) o[c * os] = acc[c] * factor;
      lse_[b * lse.stride(0) + h * lse.stride(1) + (i0 + r) * lse.stride(2)] =
          sum == T(0) ? T(0) : s.row_max[r] + std::log(sum);
    }
  }

  const ops::FlashAttentionArgs& a_;
  const int64_t batch_, q_heads_, q_len_, head_dim_, k_groups_, v_groups_, kv_len_, value_dim_,
      value_pad_;
  const T *q_, *k_, *v_;
  T *out_, *lse_;
  bool direct_v_ = false;
  int64_t query_block_ = kQueryBlock, query_pad_ = kQueryBlock, key_block_ = kKeyBlock,
          query_blocks_ = 0;
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
