// oneDNN convolutions (forward). One engine for the process and one stream per thread;
// primitives (and the reorders that bring the weights, and NCHW activations, into oneDNN's blocked
// layouts) are built once per geometry and kept in a bounded LRU cache. Debian's libdnnl runs on
// OpenMP, so it follows omp_set_num_threads, i.e. kiln::set_num_threads; the thread count is part
// of the cache key because oneDNN sizes its work split when it builds a primitive.
#include "ops/conv/onednn_conv.h"

#include "ops/conv/onednn_common.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ops::conv {
namespace {

using namespace onednn;  // NOLINT: the shared oneDNN helpers

// A primitive with the reorders around it. A reorder is absent where the caller's layout is
// already the one the primitive wants.
struct ConvPlan {
  dnnl::primitive conv;
  memory::desc src_md, weights_md, dst_md, bias_md, scratchpad_md;
  memory::desc user_src_md, user_weights_md, user_dst_md;
  std::optional<dnnl::reorder> src_reorder, weights_reorder, dst_reorder;
};

PlanCache<ConvPlan>& conv_plan_cache() {
  static PlanCache<ConvPlan> c(kOnednnCacheCapacity);
  return c;
}

// Builds the plan, or returns nullptr when no oneDNN implementation accepts the geometry.
std::shared_ptr<const ConvPlan> make_plan(const Tensor& out, const Tensor& input,
                                          const Tensor& weight, bool has_bias, const ConvParams& p,
                                          MemoryFormat fmt, ConvActivation activation) {
  auto plan = std::make_shared<ConvPlan>();
  const auto f32 = memory::data_type::f32;
  plan->user_src_md = plain_md(input.sizes(), fmt);
  plan->user_dst_md = plain_md(out.sizes(), fmt);
  plan->user_weights_md = user_weights_md(weight, p);
  const memory::desc bias_md =
      has_bias ? memory::desc({out.size(1)}, f32, memory::format_tag::a) : memory::desc();
  const bool native = fmt != MemoryFormat::Contiguous || !worth_blocking(weight);
  const memory::desc any_src(dims_of(input.sizes()), f32, memory::format_tag::any);
  const memory::desc any_dst(dims_of(out.sizes()), f32, memory::format_tag::any);
  const memory::desc& src_md = native ? plan->user_src_md : any_src;
  const memory::desc& dst_md = native ? plan->user_dst_md : any_dst;
  const memory::desc weights_any(plan->user_weights_md.dims(), f32, memory::format_tag::any);

  Dims strides = dims_of(p.stride), pad_l = dims_of(p.padding), pad_r = dims_of(p.padding), dilates;
  for (int64_t d : p.dilation) dilates.push_back(d - 1);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (activation == ConvActivation::Relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0F, dnnl::algorithm::eltwise_relu, 0.0F, 0.0F);
    attr.set_post_ops(ops);
  }
  try {
    if (!p.transposed) {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, src_md, weights_any,
                                           bias_md, dst_md, strides, dilates, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
      plan->src_md = pd.src_desc();
      plan->weights_md = pd.weights_desc();
      plan->dst_md = pd.dst_desc();
      plan->scratchpad_md = pd.scratchpad_desc();
      plan->conv = dnnl::convolution_forward(pd);
    } else {
      // PyTorch's output_padding extends the right edge: oneDNN's padding_r is padding minus it.
      for (size_t i = 0; i < pad_r.size(); ++i) pad_r[i] -= p.output_padding[i];
      dnnl::deconvolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
          weights_any, bias_md, dst_md, strides, dilates, pad_l, pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(desc, attr, engine());
      plan->src_md = pd.src_desc();
      plan->weights_md = pd.weights_desc();
      plan->dst_md = pd.dst_desc();
      plan->scratchpad_md = pd.scratchpad_desc();
      plan->conv = dnnl::deconvolution_forward(pd);
    }
    plan->bias_md = bias_md;
    plan->src_reorder = reorder_if_needed(plan->user_src_md, plan->src_md);
    plan->weights_reorder = reorder_if_needed(plan->user_weights_md, plan->weights_md);
    plan->dst_reorder = reorder_if_needed(plan->dst_md, plan->user_dst_md);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return plan;
}

// Per-thread scratch buffers, grown as needed (one call at a time per thread).
struct Buffers {
  std::vector<std::byte> src, weights, dst, scratchpad;
};

// The plan of a geometry, built and cached on first use; null when oneDNN has no kernel for it.
std::shared_ptr<const ConvPlan> plan_for(const Tensor& out, const Tensor& input,
                                         const Tensor& weight, bool has_bias, const ConvParams& p,
                                         MemoryFormat fmt,
                                         ConvActivation activation = ConvActivation::None) {
  const std::string key = plan_key(activation == ConvActivation::Relu ? 'r' : 'f', out, input,
                                   weight, has_bias, p, fmt);
  std::shared_ptr<const ConvPlan> plan = conv_plan_cache().find(key);
  if (!plan) {
    plan = make_plan(out, input, weight, has_bias, p, fmt, activation);
    if (plan) conv_plan_cache().insert(key, plan);
  }
  return plan;
}

// A packed weight starts with the descriptor of its layout, padded so that the weights keep the
// buffer's 64-byte alignment.
constexpr size_t kLayoutBytes = sizeof(dnnl_memory_desc_t);
constexpr size_t kPackedHeader = (kLayoutBytes + 63) / 64 * 64;

bool packed_for(const Tensor& packed, const ConvPlan& plan) {
  if (!packed.defined() || packed.dtype() != DType::UInt8 || !packed.is_contiguous() ||
      static_cast<size_t>(packed.numel()) != kPackedHeader + plan.weights_md.get_size()) {
    return false;
  }
  memory::desc layout;
  std::memcpy(&layout.data, packed.data_ptr(), kLayoutBytes);
  return layout == plan.weights_md;
}

}  // namespace

size_t onednn_cache_size() { return conv_plan_cache().size(); }

int64_t onednn_packed_weight_bytes(const Tensor& out, const Tensor& input, const Tensor& weight,
                                   bool has_bias, const ConvParams& p, MemoryFormat fmt) {
  std::shared_ptr<const ConvPlan> plan = plan_for(out, input, weight, has_bias, p, fmt);
  if (!plan || !plan->weights_reorder) return 0;
  return static_cast<int64_t>(kPackedHeader + plan->weights_md.get_size());
}

void onednn_pack_weight(const Tensor& packed, const Tensor& out, const Tensor& input,
                        const Tensor& weight, bool has_bias, const ConvParams& p,
                        MemoryFormat fmt) {
  KILN_CHECK(packed.dtype() == DType::UInt8 && packed.is_contiguous(),
             "convolution weight packing: expected a contiguous uint8 buffer");
  std::byte* bytes = static_cast<std::byte*>(packed.data_ptr());
  std::memset(bytes, 0, static_cast<size_t>(std::min<int64_t>(packed.numel(), kPackedHeader)));
  std::shared_ptr<const ConvPlan> plan = plan_for(out, input, weight, has_bias, p, fmt);
  if (!plan || !plan->weights_reorder ||
      static_cast<size_t>(packed.numel()) != kPackedHeader + plan->weights_md.get_size()) {
    return;  // an all-zero header matches no layout
  }
  dnnl::stream& s = stream();
  memory user_weights(plan->user_weights_md, engine(), weight.data_ptr());
  memory blocked(plan->weights_md, engine(), bytes + kPackedHeader);
  plan->weights_reorder->execute(s, user_weights, blocked);
  s.wait();
  std::memcpy(bytes, &plan->weights_md.data, kLayoutBytes);
}

bool onednn_convolution(const Tensor& out, const Tensor& input, const Tensor& weight,
                        const Tensor& bias, const ConvParams& p, MemoryFormat fmt,
                        const Tensor& packed, ConvActivation activation) {
  std::shared_ptr<const ConvPlan> plan =
      plan_for(out, input, weight, bias.defined(), p, fmt, activation);
  if (!plan) return false;
  thread_local Buffers buffers;
  dnnl::stream& s = stream();
  dnnl::engine& e = engine();

  memory user_src(plan->user_src_md, e, input.data_ptr());
  memory user_weights(plan->user_weights_md, e, weight.data_ptr());
  memory user_dst(plan->user_dst_md, e, out.data_ptr());
  memory src = user_src, weights = user_weights, dst = user_dst;
  if (plan->src_reorder) {
    src = memory(plan->src_md, e, sized(buffers.src, plan->src_md.get_size()));
    plan->src_reorder->execute(s, user_src, src);
  }
  if (plan->weights_reorder && packed_for(packed, *plan)) {
    weights =
        memory(plan->weights_md, e, static_cast<std::byte*>(packed.data_ptr()) + kPackedHeader);
  } else if (plan->weights_reorder) {
    weights = memory(plan->weights_md, e, sized(buffers.weights, plan->weights_md.get_size()));
    plan->weights_reorder->execute(s, user_weights, weights);
  }
  if (plan->dst_reorder) {
    dst = memory(plan->dst_md, e, sized(buffers.dst, plan->dst_md.get_size()));
  }
  memory scratchpad(plan->scratchpad_md, e,
                    sized(buffers.scratchpad, plan->scratchpad_md.get_size()));
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_SCRATCHPAD, scratchpad}};
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(plan->bias_md, e, bias.data_ptr()));
  plan->conv.execute(s, args);
  if (plan->dst_reorder) plan->dst_reorder->execute(s, dst, user_dst);
  s.wait();
  return true;
}

}  // namespace kiln::ops::conv
