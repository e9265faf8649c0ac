#pragma once
// The dispatch mode installed on this thread (null when none), for layers that must step outside
// it (autograd runs a backward pass requested inside a capture on real tensors).
#include <kiln/ops/registry.h>

namespace kiln::ops {

DispatchMode* current_dispatch_mode();

}  // namespace kiln::ops
