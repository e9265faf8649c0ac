// The pads written in kiln ops (their decompositions): constant_pad_nd crops with slices and pads
// with cat of full() blocks; the reflect / replicate / circular pads index each padded dim with
// its source map (the table the kernel remaps with).
#include "ops/resample/pad_common.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/shape.h>

#include <algorithm>

namespace kiln::ops::padding {

namespace {

// self with `count` positions of `value` along dim d (sizes of self elsewhere).
Tensor block_like(const Tensor& self, int64_t d, int64_t count, const Scalar& value) {
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  sizes[static_cast<size_t>(d)] = count;
  return full(sizes, value, TensorOptions(self.dtype()).device(self.device()));
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

Tensor constant_pad_decomposition(const Tensor& self, IntList pad, const Scalar& value) {
  DimVector out_sizes(self.sizes().begin(), self.sizes().end());
  bool nothing_kept = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const auto d = static_cast<size_t>(self.dim() - 1 - static_cast<int64_t>(i));
    const int64_t n = out_sizes[d], lo = pad[2 * i], hi = pad[2 * i + 1];
    nothing_kept |= n + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0) <= 0;
    out_sizes[d] = n + lo + hi;
  }
  // Negative pads that remove all of a dim leave only `value` (the kernel's early return).
  if (nothing_kept) {
    return full(out_sizes, value, TensorOptions(self.dtype()).device(self.device()));
  }
  Tensor x = self;
  bool changed = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    const int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
    if (lo < 0 || hi < 0) {
      x = x.slice(d, std::max<int64_t>(-lo, 0), x.size(d) - std::max<int64_t>(-hi, 0));
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
