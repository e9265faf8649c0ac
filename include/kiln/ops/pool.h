#pragma once
// 2-d pooling ops (aten's semantics) over 3-D (C, H, W) or 4-D (N, C, H, W) inputs; a
// channels-last 4-D input gives a channels-last output. An empty stride means the kernel size.
// Max pooling's indices are h * W + w within each (n, c) plane.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <tuple>

namespace kiln {

std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& self, IntList kernel_size, IntList stride = {}, IntList padding = {0},
    IntList dilation = {1}, bool ceil_mode = false,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor max_pool2d(const Tensor& self, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, IntList dilation = {1}, bool ceil_mode = false,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor avg_pool2d(const Tensor& self, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor adaptive_avg_pool2d(const Tensor& self, IntList output_size,
                           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::tuple<Tensor, Tensor> adaptive_max_pool2d(
    const Tensor& self, IntList output_size,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
