#pragma once
// Dropout, drawing from kiln's Philox generator (include/kiln/ops/random.h): a seed fixes every
// mask. Training zeroes each element with probability p and scales the rest by 1 / (1 - p);
// train = false is the identity.
#include <kiln/ops/random.h>

#include <kiln/core/source_location.h>
#include <utility>

namespace kiln {

// (output, mask): mask is bool, true where the element was kept.
std::pair<Tensor, Tensor> native_dropout(
    const Tensor& input, double p, bool train = true, Generator* gen = nullptr,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true, Generator* gen = nullptr,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& dropout_(Tensor& input, double p = 0.5, bool train = true, Generator* gen = nullptr,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// Zeroes whole channels: input (N, C, d1, ...) with at least 2 dims (aten's feature_dropout).
Tensor feature_dropout(const Tensor& input, double p = 0.5, bool train = true,
                       Generator* gen = nullptr,
                       const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& feature_dropout_(Tensor& input, double p = 0.5, bool train = true, Generator* gen = nullptr,
                         const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// torch.nn.functional.dropout2d: (N, C, H, W), or unbatched (C, H, W) with whole channels zeroed.
Tensor dropout2d(const Tensor& input, double p = 0.5, bool train = true, Generator* gen = nullptr,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
