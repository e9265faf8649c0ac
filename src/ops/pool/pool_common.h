#pragma once
// Shared pieces of the 2-d pooling ops: argument checks and output sizes (PyTorch's rules),
// output metadata that keeps a channels-last input's layout, and running the kernel.
#include "ops/pool/pool_kernels.h"

#include <kiln/ops/registry.h>

namespace kiln::ops::pool {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

// The input's dims as a pooling sees them; 3-D (C, H, W) inputs have batch 1.
struct PoolInput {
  bool batched = false;
  int64_t batch = 1, channels = 0, height = 0, width = 0;
  bool channels_last = false;
};

// Checks rank (3 or 4) and non-empty non-batch dims, naming op.
PoolInput pool_input(const Tensor& input, const char* op);

// Fills a's window and output sizes for Max/Avg pooling from the schema's int lists, checking
// them as PyTorch does (positive kernel/stride/dilation, padding at most half the kernel, output
// size at least 1). An empty stride means stride = kernel_size.
void window_geometry(Pool2dArgs& a, const PoolInput& in, IntList kernel_size, IntList stride,
                     IntList padding, IntList dilation, bool ceil_mode, const char* op);

// For the adaptive kinds: checks output_size (two sizes >= 0) and fills a's output sizes.
void adaptive_geometry(Pool2dArgs& a, const PoolInput& in, IntList output_size, const char* op);

// The meta of an output of dtype `dtype` with a's output sizes, in the input's layout.
TensorMeta output_meta(const Tensor& input, const PoolInput& in, const Pool2dArgs& a, DType dtype);

// The same for an input with symbolic sizes (meta functions only; the window stays concrete):
// the input's dims, a windowed pooling's output sizes as expressions of them (window_geometry's
// checks, comparisons on symbols recording guards), and an output's meta.
struct SymPoolInput {
  bool batched = false;
  SymInt batch = 1, channels = 0, height = 0, width = 0;
  bool channels_last = false;
};
SymPoolInput sym_pool_input(const Tensor& input, const char* op);
std::pair<SymInt, SymInt> sym_window_output(const SymPoolInput& in, IntList kernel_size,
                                            IntList stride, IntList padding, IntList dilation,
                                            bool ceil_mode, const char* op);
TensorMeta sym_output_meta(const Tensor& input, const SymPoolInput& in, const SymInt& out_h,
                           const SymInt& out_w, DType dtype);

// Runs the kernel writing out (and indices), converting input to the layout chosen.
void run(Pool2dArgs a, const Tensor& input, const Tensor& out, const Tensor& indices);

void check_dtype(const Tensor& input, bool integers_ok, const char* op);

// ---- backward ops ----

// grad_input's meta for a backward op: checks grad_output (and indices, when defined) against the
// forward output a describes, and returns the input's sizes in the input's layout.
TensorMeta grad_input_meta(const Tensor& grad_output, const Tensor& input, const Tensor& indices,
                           const PoolInput& in, const Pool2dArgs& a, const char* op);
// The same on symbolic sizes (the forward output's out_h x out_w).
TensorMeta grad_input_meta(const Tensor& grad_output, const Tensor& input, const Tensor& indices,
                           const SymPoolInput& in, const SymInt& out_h, const SymInt& out_w,
                           const char* op);

// Runs the backward kernel: out = the gradient of the pooling a describes with respect to input
// (float32 or float64; half types go through float32).
void run_backward(Pool2dArgs a, const Tensor& grad_output, const Tensor& input,
                  const Tensor& indices, const Tensor& out);

// A forward sample's arguments with the schema's defaults filled in (for backward samples).
Stack normalized(const OpDef& op, Stack args);

// d(backward)/d(grad_output) of the max kinds: the incoming gradient read at each output's
// argmax (a gather over the flattened planes).
Tensor gather_at_indices(const Tensor& grad, const Tensor& indices);

}  // namespace kiln::ops::pool
