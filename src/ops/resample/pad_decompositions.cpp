// The pads written in kiln ops (their decompositions): constant_pad_nd crops with slices and pads
// with cat of full() blocks; the reflect / replicate / circular pads index each padded dim with
// its source map (the table the kernel remaps with).
#include "ops/resample/pad_common.h"

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

}  // namespace

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
    const std::vector<int64_t> map =
        pad_source_map(mode, self.size(d), padding[2 * i], padding[2 * i + 1]);
    std::vector<Tensor> indices(static_cast<size_t>(d));  // full slices before d
    indices.push_back(from_vector(map));
    x = x.index(indices);
  }
  return padding.empty() ? self.clone() : x;
}

}  // namespace kiln::ops::padding
