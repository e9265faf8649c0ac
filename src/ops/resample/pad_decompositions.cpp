// The pads written in kiln ops (their decompositions): constant_pad_nd crops with slices and pads
// with cat of full() blocks; the reflect / replicate / circular pads index each padded dim with
// its source map (the table the kernel remaps with).
#include "ops/resample/pad_common.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/sym_size_ops.h>

#include <algorithm>

namespace kiln::ops::padding {

namespace {

// self with `count` positions of `value` along dim d (sizes of self elsewhere).
Tensor block_like(const Tensor& self, int64_t d, const SymInt& count, const Scalar& value) {
  SymDimVector sizes = self.sym_sizes().vec();
  sizes[static_cast<size_t>(d)] = count;
  return full_symint(sizes, value, TensorOptions(self.dtype()).device(self.device()));
}

// min(t, hi) and max(t, lo) with numbers.
Tensor at_most(const Tensor& t, int64_t hi) { return where(t > hi, hi, t); }
Tensor at_least(const Tensor& t, int64_t lo) { return where(t < lo, lo, t); }

}  // namespace

// pad_source_map's arithmetic: reflect folds at both ends (n - 1 - |n - 1 - |i||), replicate
// clamps, circular wraps within the kept part.
Tensor pad_source_index(PadMode mode, int64_t n, int64_t lo, int64_t hi, Device device) {
  const int64_t out = std::max<int64_t>(n + lo + hi, 0);
  const Tensor j = arange(Scalar(int64_t{0}), Scalar(out), Scalar(int64_t{1}),
                          TensorOptions(DType::Int64).device(device));
  switch (mode) {
    case PadMode::Reflect:
      return (n - 1) - ((n - 1) - (j - lo).abs()).abs();
    case PadMode::Replicate:
      return at_most(at_least(j - lo, 0), n - 1);
    case PadMode::Circular: {
      const int64_t crop_lo = std::max<int64_t>(-lo, 0);
      const int64_t kept = n - crop_lo - std::max<int64_t>(-hi, 0);
      return crop_lo + (j - std::max<int64_t>(lo, 0)) % std::max<int64_t>(kept, 1);
    }
  }
  return j;
}

Tensor constant_pad_decomposition(const Tensor& self, SymIntList pad, const Scalar& value) {
  SymDimVector out_sizes = self.sym_sizes().vec();
  bool nothing_kept = false;
  const SymInt zero(int64_t{0});
  auto negative_part = [&](const SymInt& p) { return p < 0 ? p : zero; };
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const auto d = static_cast<size_t>(self.dim() - 1 - static_cast<int64_t>(i));
    const SymInt n = out_sizes[d], lo = pad[2 * i], hi = pad[2 * i + 1];
    nothing_kept |= n + negative_part(lo) + negative_part(hi) <= 0;
    out_sizes[d] = n + lo + hi;
  }
  // Negative pads that remove all of a dim leave only `value` (the kernel's early return).
  if (nothing_kept) {
    return full_symint(out_sizes, value, TensorOptions(self.dtype()).device(self.device()));
  }
  Tensor x = self;
  bool changed = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    const SymInt lo = pad[2 * i], hi = pad[2 * i + 1];
    if (lo < 0 || hi < 0) {
      const SymInt start = zero - negative_part(lo);
      const SymInt length = x.sym_size(d) - start + negative_part(hi);
      x = narrow_symint(x, d, start, length);
      changed = true;
    }
    if (lo > 0 || hi > 0) {
      std::vector<Tensor> parts;
      if (lo > 0) parts.push_back(block_like(x, d, lo, value));
      parts.push_back(x);
      if (hi > 0) parts.push_back(block_like(x, d, hi, value));
      x = cat(parts, d);
      changed = true;
    }
  }
  return changed ? x : self.clone();
}

Tensor mode_pad_decomposition(const Tensor& self, IntList padding, PadMode mode) {
  Tensor x = self;
  for (size_t i = 0; i < padding.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    std::vector<Tensor> indices(static_cast<size_t>(d));  // full slices before d
    indices.push_back(
        pad_source_index(mode, self.size(d), padding[2 * i], padding[2 * i + 1], self.device()));
    x = x.index(indices);
  }
  return padding.empty() ? self.clone() : x;
}

}  // namespace kiln::ops::padding
