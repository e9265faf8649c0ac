#pragma once
// The CUDA code generator: one CUDA C++ source per program (compiled with NVRTC), one kernel per
// loop nest. A kernel takes one parameter, a struct of the storage base pointers of the buffers
// it reads and writes and the symbols' values; it computes everything from those, grid-stride,
// so any grid is correct and the launch only chooses how many blocks run.
//
// Two shapes of kernel:
//   flat:  nests of pointwise parts with no loops of their own inside the shared ones (or one
//          pointwise kernel): one thread per element of the shared loops.
//   block: every other nest: one block per iteration of the shared loops; each part in turn,
//          its own loops spread over the block's threads; a reduction whose output is one value
//          per iteration combines the threads' partial results through warp shuffles and shared
//          memory; the parts are separated by a barrier, so a part reads what earlier ones wrote
//          (local buffers live in shared memory). A reduction to one value is one block.
#include "inductor/loop_ir.h"

#include <map>
#include <string>

namespace kiln::inductor {

// How a generated kernel is launched: `blocks` (an expression of the symbols; clamped at run
// time, the kernel strides over the rest) of `threads` threads with `shared_bytes` of dynamic
// shared memory; its parameter struct holds `args.size()` pointers, then the symbols.
struct CudaLaunch {
  // The kernel's name in the source; empty: the name the launch is filed under (a launch variant
  // of max-autotune runs another kernel's code with other threads or blocks).
  std::string symbol;
  enum class Form { Flat, Column, Block } form = Form::Flat;  // the kernel shapes above
  Size blocks;
  int threads = 0;
  int64_t shared_bytes = 0;
  // Arguments passed by value (Buffer::host_scalar): their position among the kernel's buffer
  // arguments and their size in bytes. The launch copies the value from the host address the
  // runtime gives for them into the parameter's 8 bytes.
  std::vector<std::pair<int, int>> host_scalars;
};

struct CudaSource {
  std::string text;
  std::map<std::string, CudaLaunch> launches;  // by kernel name
};

// The CUDA source of every loop nest of `program`, whose `function` and `args` it sets (nests with
// the same code share one kernel). Raises kiln::Error for what it cannot generate (a nest whose
// local buffers do not fit in shared memory). With `variants` (max-autotune), each nest also gets
// LoopNest::variants that max-autotune times at the first call: a flat kernel launched with
// 128, 512 or 1024 threads a block, or with a quarter of the blocks (each thread striding over
// four elements); a block kernel generated for 128 to 1024 threads (column kernels keep theirs).
CudaSource generate_cuda(Program& program, bool variants = false);

// The labels of those variants, for options{"autotune_force": ...}.
const std::vector<std::string>& cuda_variant_labels();

}  // namespace kiln::inductor
