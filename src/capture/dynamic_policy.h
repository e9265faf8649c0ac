#pragma once
// Which argument dimensions a compiled function traces as symbols (PyTorch's dynamic-shape
// policy): per dimension, mark_static / mark_dynamic on the tensor decide first; then
// CompileOptions::dynamic (true: every dimension, false: none); unset (automatic dynamic): the
// dimensions an earlier recompile found changed in size. Only contiguous tensors get dynamic
// dimensions (a symbolic proxy is traced with contiguous strides).
#include "capture/dynamic_dim.h"

#include <kiln/capture/pytree.h>

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace kiln::capture {

// (argument leaf, dimension >= 0) pairs that automatic dynamic made dynamic.
using AutomaticDynamicDims = std::set<std::pair<size_t, int64_t>>;

std::vector<DynamicDim> plan_dynamic_dims(const Leaves& args, std::optional<bool> dynamic,
                                          const AutomaticDynamicDims& automatic);

}  // namespace kiln::capture
