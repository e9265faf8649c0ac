#pragma once
// The reduction engine shared by every reducer (include only from *.kernel.cpp files).
//
// A reducer R folds input elements into an accumulator:
//   using acc_t;                 acc_t identity() const;
//   void row(acc_t&, const T* p, int64_t n, int64_t stride, int64_t index) const;  a run of n
//   void merge(acc_t& a, const acc_t& b) const;   b covers elements after a's
//   void write(int64_t off0, int64_t off1, const acc_t&) const;  output element offsets
// and optionally, when kAcross, folds one input row (reduced index `index`) into a block of
// accumulators of consecutive outputs (`across(acc, p, m, index)`, p contiguous), the
// vectorized path for reducing an outer dim. kCascade asks the engine to add such rows in levels
// (pairwise-like), for float sums. capability.h (through reduce_kernels.h) must come before vec.h:
// it defines the namespace.
#include "ops/reduction/reduce_kernels.h"
//
#include "ops/cpu/vec.h"

#include <kiln/core/parallel.h>

#include <algorithm>
#include <memory>

namespace kiln::cpu::KILN_CAP_NAMESPACE::reduce {

using ops::ReducePlan;

// Walks the reduced elements [b, e) of one output (linear order over the plan's reduced dims),
// calling row(ptr, n, stride, index) for each run along the fastest reduced dim.
template <typename T, typename RowFn>
void walk_reduced(const ReducePlan& p, const T* base, int64_t b, int64_t e, const RowFn& row) {
  if (b >= e) return;
  const size_t nr = p.red_sizes.size();
  if (nr == 0) {
    row(base, 1, 0, 0);
    return;
  }
  const int64_t n0 = p.red_sizes[0], s0 = p.red_strides[0];
  DimVector counter(nr, 0);
  int64_t i0 = b % n0, rem = b / n0;
  const T* row_start = base;
  for (size_t d = 1; d < nr; ++d) {
    counter[d] = rem % p.red_sizes[d];
    rem /= p.red_sizes[d];
    row_start += counter[d] * p.red_strides[d];
  }
  int64_t pos = b;
  while (true) {
    const int64_t len = std::min(n0 - i0, e - pos);
    row(row_start + i0 * s0, len, s0, pos);
    pos += len;
    if (pos >= e) return;
    i0 = 0;
    for (size_t d = 1; d < nr; ++d) {
      row_start += p.red_strides[d];
      if (++counter[d] < p.red_sizes[d]) break;
      row_start -= counter[d] * p.red_strides[d];
      counter[d] = 0;
    }
  }
}

struct Offsets {
  int64_t in = 0, out0 = 0, out1 = 0;
};

// Element offsets of consecutive outputs (linear over the plan's kept dims), advanced with a
// counter rather than divisions.
class OutputCursor {
 public:
  OutputCursor(const ReducePlan& p, int64_t o) : p_(p), index_(p.out_sizes.size(), 0) {
    for (size_t d = 0; d < p.out_sizes.size(); ++d) {
      index_[d] = o % p.out_sizes[d];
      o /= p.out_sizes[d];
      off_.in += index_[d] * p.out_in_strides[d];
      off_.out0 += index_[d] * p.out_strides[0][d];
      off_.out1 += index_[d] * p.out_strides[1][d];
    }
  }
  const Offsets& operator*() const { return off_; }
  void next() {
    for (size_t d = 0; d < index_.size(); ++d) {
      off_.in += p_.out_in_strides[d];
      off_.out0 += p_.out_strides[0][d];
      off_.out1 += p_.out_strides[1][d];
      if (++index_[d] < p_.out_sizes[d]) return;
      off_.in -= index_[d] * p_.out_in_strides[d];
      off_.out0 -= index_[d] * p_.out_strides[0][d];
      off_.out1 -= index_[d] * p_.out_strides[1][d];
      index_[d] = 0;
    }
  }

 private:
  const ReducePlan& p_;
  DimVector index_;
  Offsets off_;
};

inline Offsets offsets_of(const ReducePlan& p, int64_t o) { return *OutputCursor(p, o); }

template <typename R>
concept HasAcross = R::kAcross;

inline constexpr int64_t kAcrossBlock = 256;  // outputs folded together on the outer-dim path
inline constexpr int64_t kCascadeRows = 64;   // rows per level of the cascaded outer-dim sum

// Outer-dim path: the fastest kept dim is contiguous in the input, so a block of consecutive
// outputs reads a contiguous stretch of every reduced row.
template <typename T, typename R>
void reduce_across(const ReducePlan& p, const T* in, const R& r, int64_t b, int64_t e) {
  using acc_t = typename R::acc_t;
  const int64_t n_red = p.reduce_size();
  const int64_t size0 = p.out_sizes[0];
  acc_t level[3][kAcrossBlock];
  for (int64_t o = b; o < e;) {
    const int64_t j = o % size0;
    const int64_t m = std::min({kAcrossBlock, size0 - j, e - o});
    const Offsets off = offsets_of(p, o);
    const T* base = in + off.in;
    for (int l = 0; l < (R::kCascade ? 3 : 1); ++l) std::fill(level[l], level[l] + m, r.identity());
    int64_t rows0 = 0, rows1 = 0;
    walk_reduced(p, base, 0, n_red, [&](const T* ptr, int64_t n, int64_t s, int64_t idx) {
      for (int64_t i = 0; i < n; ++i) {
        r.across(level[0], ptr + i * s, m, idx + i);
        if constexpr (R::kCascade) {
          if (++rows0 == kCascadeRows) {
            for (int64_t k = 0; k < m; ++k) r.merge(level[1][k], level[0][k]);
            std::fill(level[0], level[0] + m, r.identity());
            rows0 = 0;
            if (++rows1 == kCascadeRows) {
              for (int64_t k = 0; k < m; ++k) r.merge(level[2][k], level[1][k]);
              std::fill(level[1], level[1] + m, r.identity());
              rows1 = 0;
            }
          }
        }
      }
    });
    for (int64_t k = 0; k < m; ++k) {
      acc_t a = level[0][k];
      if constexpr (R::kCascade) {
        a = level[2][k];
        r.merge(a, level[1][k]);
        r.merge(a, level[0][k]);
      }
      r.write(off.out0 + k * p.out_strides[0][0], off.out1 + k * p.out_strides[1][0], a);
    }
    o += m;
  }
}

template <typename T, typename R>
void run(const ReducePlan& p, const R& r) {
  using acc_t = typename R::acc_t;
  const T* in = reinterpret_cast<const T*>(p.in);
  const int64_t n_out = p.num_outputs(), n_red = p.reduce_size();
  if (n_out == 0) return;
  auto fold = [&](const T* base, int64_t b, int64_t e) {
    acc_t a = r.identity();
    walk_reduced(p, base, b, e, [&](const T* ptr, int64_t n, int64_t s, int64_t idx) {
      r.row(a, ptr, n, s, idx);
    });
    return a;
  };
  const int nthreads = get_num_threads();
  if (n_out < nthreads && n_red >= 2 * kGrainSize) {
    // Few outputs: each thread folds a slice of the reduced range, then slices merge in order.
    for (int64_t o = 0; o < n_out; ++o) {
      const Offsets off = offsets_of(p, o);
      auto partial = std::make_unique<acc_t[]>(static_cast<size_t>(nthreads));
      const int64_t chunk = (n_red + nthreads - 1) / nthreads;
      parallel_for(0, nthreads, 1, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t) {
          partial[static_cast<size_t>(t)] =
              fold(in + off.in, t * chunk, std::min(n_red, (t + 1) * chunk));
        }
      });
      acc_t a = partial[0];
      for (int t = 1; t < nthreads; ++t) r.merge(a, partial[static_cast<size_t>(t)]);
      r.write(off.out0, off.out1, a);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n_red, 1));
  bool across = false;
  if constexpr (HasAcross<R>) {
    across = !p.out_sizes.empty() && p.out_in_strides[0] == 1 && p.out_sizes[0] >= 4 && n_red > 1;
  }
  parallel_for(0, n_out, grain, [&](int64_t b, int64_t e) {
    if constexpr (HasAcross<R>) {
      if (across) {
        reduce_across(p, in, r, b, e);
        return;
      }
    }
    OutputCursor cursor(p, b);
    if (p.red_sizes.size() == 1) {
      // One reduced dim: each output is a single run.
      const int64_t n0 = p.red_sizes[0], s0 = p.red_strides[0];
      for (int64_t o = b; o < e; ++o, cursor.next()) {
        acc_t a = r.identity();
        r.row(a, in + (*cursor).in, n0, s0, 0);
        r.write((*cursor).out0, (*cursor).out1, a);
      }
      return;
    }
    for (int64_t o = b; o < e; ++o, cursor.next()) {
      r.write((*cursor).out0, (*cursor).out1, fold(in + (*cursor).in, 0, n_red));
    }
  });
}

}  // namespace kiln::cpu::KILN_CAP_NAMESPACE::reduce
