#pragma once
// What the oneDNN forward and backward convolutions share: the weight descriptor that reads
// PyTorch's layouts in place, the layout decision, reorders and aligned per-thread scratch buffers
// (the engine, streams and primitive cache are every oneDNN kernel's: ops/onednn/runtime.h).
#include "ops/conv/conv_params.h"
#include "ops/onednn/runtime.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ops::conv::onednn {

using dnnl::memory;
using Dims = memory::dims;

using kiln::ops::onednn::engine;
using kiln::ops::onednn::PlanCache;
using kiln::ops::onednn::sized;
using kiln::ops::onednn::stream;

inline Dims dims_of(IntList v) { return Dims(v.begin(), v.end()); }

// Dense strides of `t` in the format it is dense in (its own strides may be arbitrary on size-1
// dims, which oneDNN's layout matching would not accept).
DimVector canonical_strides(const Tensor& t);

// The weight as oneDNN indexes it: {OC, IC, k...} or {G, OC/G, IC/G, k...} for groups > 1, read
// in place from PyTorch's [OC, IC/G, k...] (forward) or [IC, OC/G, k...] (transposed) layouts.
memory::desc user_weights_md(const Tensor& w, const ConvParams& p);

// A plain f32 descriptor of `sizes` laid out in `fmt`.
memory::desc plain_md(IntList sizes, MemoryFormat fmt);

// Whether NCHW activations should go through oneDNN's blocked layouts (its direct kernels) rather
// than be read in place; channels-last activations are always read in place.
bool worth_blocking(const Tensor& weight);

std::optional<dnnl::reorder> reorder_if_needed(const memory::desc& from, const memory::desc& to);

// The geometry's cache key (sizes, strides of the weight, parameters, layout, thread count; oneDNN
// sizes its work split when it builds a primitive) prefixed by `kind`.
std::string plan_key(char kind, const Tensor& out, const Tensor& input, const Tensor& weight,
                     bool has_bias, const ConvParams& p, MemoryFormat fmt);

}  // namespace kiln::ops::conv::onednn
