#pragma once
// The multi-tensor optimizer updates (optimizer.cu): a step's parameters in a few launches, the
// update arguments passed as kernel parameters (no host-to-device copy, so no synchronization).
// The argument structs are optim's plain ones (optim/update_args.h).
#include "cuda/kernels/launch.h"
#include "optim/update_args.h"

#include <cstdint>

namespace kiln::cuda::kernels {

// Each element takes the float operations of adam_kernel.h / sgd_kernel.h in their order, each
// rounded once (no contraction into fused multiply-adds): the results are the CPU's, bit for bit.
// `updates` (on the host) name tensors on the current device.
void adam_updates(const optim::detail::AdamUpdateArgs* updates, int64_t count, cudaStream_t stream);
void sgd_updates(const optim::detail::SGDUpdateArgs* updates, int64_t count, cudaStream_t stream);

}  // namespace kiln::cuda::kernels
