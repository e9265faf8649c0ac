#pragma once
// out= variants for overloaded ops, named as aten names them ("scatter.src_out",
// "masked_fill.Scalar_out"). The builder's derived out= variant is always "<name>.out", which
// only one overload of a name can own.
#include <kiln/ops/registry.h>

namespace kiln::ops {

// Registers "<name>.<overload>_out" for a structured functional op with one output, links it as
// the op's out= variant, and returns the functional op.
const OpDef& with_overload_out(const OpDef& functional);

}  // namespace kiln::ops
