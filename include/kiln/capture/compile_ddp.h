#pragma once
// kiln::compile of a DistributedDataParallel module, as PyTorch's torch.compile(ddp_model): DDP's
// own forward (rank 0's buffers broadcast, the reducer's bookkeeping) stays eager around the
// compiled module it wraps, and each gradient bucket is all-reduced as the compiled backward
// hands its parameters their gradients. The DDP module is compiled in place (as Module.compile()
// does in PyTorch) and returned.
#include <kiln/capture/compile.h>
#include <kiln/nn/distributed_data_parallel.h>

#include <memory>

namespace kiln {

std::shared_ptr<nn::DistributedDataParallel> compile(
    const std::shared_ptr<nn::DistributedDataParallel>& ddp, CompileOptions options = {});

}  // namespace kiln
