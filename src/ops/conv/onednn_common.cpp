#include "ops/conv/onednn_common.h"

#include <kiln/core/parallel.h>

#include <cstdint>
#include <cstring>

namespace kiln::ops::conv::onednn {

DimVector canonical_strides(const Tensor& t) {
  if (t.dim() >= 4 && !t.is_contiguous()) {
    const MemoryFormat cl =
        t.dim() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
    if (t.is_contiguous(cl)) return strides_for_memory_format(t.sizes(), cl);
  }
  return strides_for_memory_format(t.sizes(), MemoryFormat::Contiguous);
}

memory::desc user_weights_md(const Tensor& w, const ConvParams& p) {
  const DimVector s = canonical_strides(w);
  const int64_t g = p.groups;
  Dims dims, strides;
  if (!p.transposed) {
    const int64_t ocg = w.size(0) / g;
    if (g > 1) {
      dims = {g, ocg, w.size(1)};
      strides = {s[0] * ocg, s[0], s[1]};
    } else {
      dims = {w.size(0), w.size(1)};
      strides = {s[0], s[1]};
    }
  } else {
    const int64_t icg = w.size(0) / g;
    if (g > 1) {
      dims = {g, w.size(1), icg};
      strides = {s[0] * icg, s[1], s[0]};
    } else {
      dims = {w.size(1), w.size(0)};
      strides = {s[1], s[0]};
    }
  }
  for (int64_t i = 2; i < w.dim(); ++i) {
    dims.push_back(w.size(i));
    strides.push_back(s[static_cast<size_t>(i)]);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc plain_md(IntList sizes, MemoryFormat fmt) {
  return memory::desc(dims_of(sizes), memory::data_type::f32,
                      dims_of(strides_for_memory_format(sizes, fmt)));
}

// Measured on ResNet-18's shapes at batch 8 on a quiet 2-core Xeon: the reorders pay for every
// spatial kernel (3x3 on 7x7 outputs: 17.9 -> 12.7 ms, 3x3 stride 2 to 14x14: 13.3 -> 7.0 ms, one
// thread) but not for 1x1 kernels, which are a plain GEMM either way.
bool worth_blocking(const Tensor& weight) {
  int64_t kernel = 1;
  for (int64_t i = 2; i < weight.dim(); ++i) kernel *= weight.size(i);
  return kernel > 1;
}

std::optional<dnnl::reorder> reorder_if_needed(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

std::string plan_key(char kind, const Tensor& out, const Tensor& input, const Tensor& weight,
                     bool has_bias, const ConvParams& p, MemoryFormat fmt) {
  std::vector<int64_t> k{kind};
  auto add = [&](IntList v) {
    k.push_back(static_cast<int64_t>(v.size()));
    k.insert(k.end(), v.begin(), v.end());
  };
  add(input.sizes());
  add(out.sizes());
  add(weight.sizes());
  add(canonical_strides(weight));
  add(p.stride);
  add(p.padding);
  add(p.dilation);
  add(p.output_padding);
  k.push_back(p.groups);
  k.push_back(p.transposed);
  k.push_back(has_bias);
  k.push_back(static_cast<int64_t>(fmt));
  k.push_back(get_num_threads());
  std::string key(k.size() * sizeof(int64_t), '\0');
  std::memcpy(key.data(), k.data(), key.size());
  return key;
}

}  // namespace kiln::ops::conv::onednn
