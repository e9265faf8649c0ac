#pragma once
// Loss functions, named like torch.nn.functional. Keyword arguments go in an options struct with
// designated initializers, e.g.
//   cross_entropy(x, y, {.weight = w, .ignore_index = 0, .reduction = Reduction::Sum,
//                        .label_smoothing = 0.1});
// A reduction is given as the enum or as PyTorch's string: {.reduction = "sum"}.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <string_view>

namespace kiln {

// aten's reduction codes (the schemas' `int reduction`): 0 none, 1 mean, 2 sum.
enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };

// "none", "mean" or "sum"; raises kiln::Error naming the valid strings otherwise.
Reduction parse_reduction(std::string_view name);

// A reduction argument: the enum, or one of PyTorch's strings.
struct ReductionArg {
  Reduction value = Reduction::Mean;
  constexpr ReductionArg() = default;
  constexpr ReductionArg(Reduction r) : value(r) {}                         // NOLINT: implicit
  ReductionArg(std::string_view name) : value(parse_reduction(name)) {}     // NOLINT: implicit
  ReductionArg(const char* name) : ReductionArg(std::string_view(name)) {}  // NOLINT: implicit
  operator Reduction() const { return value; }                              // NOLINT: implicit
};

struct CrossEntropyOptions {
  Tensor weight = {};  // (C) rescaling per class; undefined for none
  int64_t ignore_index = -100;
  ReductionArg reduction = {};
  double label_smoothing = 0.0;
};
// input (C), (N, C) or (N, C, d1, ...) logits; target class indices (N, d1, ...) of int64 (or
// uint8), or class probabilities of input's shape.
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options = {},
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());

struct NllLossOptions {
  Tensor weight = {};
  int64_t ignore_index = -100;
  ReductionArg reduction = {};
};
// input log-probabilities (C), (N, C) or (N, C, d1, ...); target class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NllLossOptions& options = {},
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());

Tensor mse_loss(const Tensor& input, const Tensor& target, ReductionArg reduction = {},
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor l1_loss(const Tensor& input, const Tensor& target, ReductionArg reduction = {},
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());

struct SmoothL1LossOptions {
  ReductionArg reduction = {};
  double beta = 1.0;
};
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossOptions& options = {},
                      const kiln::SourceLocation& loc = kiln::SourceLocation::current());

struct HuberLossOptions {
  ReductionArg reduction = {};
  double delta = 1.0;
};
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossOptions& options = {},
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());

struct BinaryCrossEntropyOptions {
  Tensor weight = {};  // broadcast to input
  ReductionArg reduction = {};
};
// input probabilities in [0, 1]; each log is clamped to >= -100 as in PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyOptions& options = {},
                            const kiln::SourceLocation& loc = kiln::SourceLocation::current());

struct BinaryCrossEntropyWithLogitsOptions {
  Tensor weight = {};      // broadcast to input
  Tensor pos_weight = {};  // weight of positive examples, broadcast along the class dim (last)
  ReductionArg reduction = {};
};
Tensor binary_cross_entropy_with_logits(
    const Tensor& input, const Tensor& target,
    const BinaryCrossEntropyWithLogitsOptions& options = {},
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());

struct KlDivOptions {
  ReductionArg reduction = {};
  bool log_target = false;
};
// input log-probabilities; target probabilities (log-probabilities with log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, const KlDivOptions& options = {},
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
