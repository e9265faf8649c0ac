#pragma once
// Compiled DDP's graph split (PyTorch's DDPOptimizer): a backend that cuts each captured graph at
// DDP's bucket boundaries (graph/parameter_bucket_cuts.h) and compiles every piece on its own with
// the backend it wraps. Each piece then has its own compiled backward: the last piece's backward
// runs first and hands its parameters their gradients, whose DDP hooks start that bucket's
// all-reduce while the earlier pieces' backward still runs — the overlap one compiled backward
// for the whole graph would lose. Pieces are compiled at their first run (their inputs from
// earlier pieces are then real tensors). KILN_LOGS=ddp prints the cuts and the pieces.
#include <kiln/backends/backend.h>

#include <cstddef>
#include <vector>

namespace kiln::capture {

// `inner` compiles the pieces; bucket_size_limits_bytes: the first bucket's limit, then the
// others' (DistributedDataParallel::bucket_size_limits_bytes()).
NamedBackend ddp_bucket_backend(NamedBackend inner, std::vector<size_t> bucket_size_limits_bytes);

}  // namespace kiln::capture
