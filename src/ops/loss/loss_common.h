#pragma once
// Helpers the loss ops share: the reduction argument, applying it, optional tensor arguments.
#include "ops/sizes_str.h"

#include <kiln/ops/loss.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {

// The schemas' `int reduction`, checked to be 0 (none), 1 (mean) or 2 (sum).
Reduction reduction_arg(const IValue& v, const char* op);

// loss.mean(), loss.sum() or loss itself (aten's apply_loss_reduction).
Tensor apply_loss_reduction(const Tensor& loss, Reduction reduction);

// A Tensor? argument: None for an undefined tensor.
inline IValue optional_tensor(const Tensor& t) { return t.defined() ? IValue(t) : IValue(); }

// The stack value of a reduction.
inline IValue reduction_value(Reduction r) { return IValue(static_cast<int64_t>(r)); }

// Target class indices must be int64 or uint8 (kiln::TypeError otherwise), as in PyTorch.
void check_class_target_dtype(const Tensor& target, const char* op);

// weight must be undefined or hold one value per class.
void check_class_weight(const Tensor& weight, int64_t classes, const char* op);

// weight, when defined, must have self's dtype (kiln::TypeError otherwise).
void check_weight_dtype(const Tensor& weight, const Tensor& self, const char* op);

// Raises kiln::Error naming the first target outside [0, classes) that is not ignore_index.
void check_class_targets(const Tensor& target, int64_t classes, int64_t ignore_index,
                         const char* op);

}  // namespace kiln::ops
