#pragma once
// kiln::compile of a DistributedDataParallel module, as PyTorch's torch.compile(ddp_model): DDP's
// own forward (rank 0's buffers broadcast, the reducer's bookkeeping) stays eager around the
// compiled module it wraps, and each gradient bucket is all-reduced as the compiled backward
// hands its parameters their gradients. The DDP module is compiled in place (as Module.compile()
// does in PyTorch) and returned.
//
// Each captured graph is cut at DDP's bucket boundaries and its pieces compiled one by one with
// the chosen backend (PyTorch's DDPOptimizer), so that a bucket's all-reduce starts when its
// piece's backward ends, while the earlier pieces' backward runs. options["optimize_ddp"] =
// "false" compiles one graph instead (torch._dynamo.config.optimize_ddp = False).
#include <kiln/capture/compile.h>
#include <kiln/nn/distributed_data_parallel.h>

#include <memory>

namespace kiln {

std::shared_ptr<nn::DistributedDataParallel> compile(
    const std::shared_ptr<nn::DistributedDataParallel>& ddp, CompileOptions options = {});

}  // namespace kiln
