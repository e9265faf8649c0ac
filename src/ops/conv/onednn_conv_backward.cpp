// oneDNN convolution gradients. Each plan is one backward primitive, built with a
// forward-training primitive as its hint (oneDNN requires one), and the reorders that bring the
// caller's tensors into the layouts it chose and its result back out. The layout decision is the
// forward's: channels-last activations are read in place, NCHW ones blocked for spatial kernels.
#include "ops/conv/onednn_conv_backward.h"

#include "ops/conv/onednn_common.h"
#include "ops/conv/onednn_conv.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ops::conv {
namespace {

using namespace onednn;  // NOLINT: the shared oneDNN helpers

// One argument of the primitive: the caller's layout, the primitive's, and the reorder between
// them (absent when they agree).
struct Port {
  int arg = 0;
  memory::desc user_md, md;
  std::optional<dnnl::reorder> reorder;
};

Port port(int arg, const memory::desc& user_md, const memory::desc& md, bool read) {
  return {arg, user_md, md, read ? reorder_if_needed(user_md, md) : reorder_if_needed(md, user_md)};
}

struct BackwardPlan {
  dnnl::primitive prim;
  std::array<Port, 2> inputs;  // read before the primitive runs
  Port output;                 // written after it
  memory::desc bias_md;        // backward-weights with a bias: its gradient, plain
  memory::desc scratchpad_md;
};

PlanCache<BackwardPlan>& backward_plan_cache() {
  static PlanCache<BackwardPlan> c(kOnednnCacheCapacity);
  return c;
}

// The descriptors of the activations: the caller's layout, or `any` to let oneDNN block them.
struct ActivationDescs {
  memory::desc image, result;  // the forward's src and dst
};

ActivationDescs activation_descs(const Tensor& image, const Tensor& result, const Tensor& weight,
                                 MemoryFormat fmt) {
  const bool native = fmt != MemoryFormat::Contiguous || !worth_blocking(weight);
  if (native) return {plain_md(image.sizes(), fmt), plain_md(result.sizes(), fmt)};
  const auto f32 = memory::data_type::f32;
  return {memory::desc(dims_of(image.sizes()), f32, memory::format_tag::any),
          memory::desc(dims_of(result.sizes()), f32, memory::format_tag::any)};
}

struct Window {
  Dims strides, dilates, pad_l, pad_r;
};

Window window(const ConvParams& p) {
  Window w{dims_of(p.stride), {}, dims_of(p.padding), dims_of(p.padding)};
  for (int64_t d : p.dilation) w.dilates.push_back(d - 1);
  // PyTorch's output_padding extends the right edge: oneDNN's padding_r is padding minus it.
  if (p.transposed) {
    for (size_t i = 0; i < w.pad_r.size(); ++i) w.pad_r[i] -= p.output_padding[i];
  }
  return w;
}

// The forward primitive oneDNN wants as a hint, and the backward primitive itself, for the
// convolution (Conv = convolution_*) or transposed convolution (deconvolution_*) families.
template <typename Fwd, typename BwdData>
std::shared_ptr<BackwardPlan> data_plan(dnnl::algorithm alg, const ActivationDescs& a,
                                        const memory::desc& weights_any, const Window& w,
                                        const memory::desc& user_go, const memory::desc& user_w,
                                        const memory::desc& user_gi) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  typename Fwd::desc fwd(dnnl::prop_kind::forward_training, alg, a.image, weights_any,
                         memory::desc(), a.result, w.strides, w.dilates, w.pad_l, w.pad_r);
  typename Fwd::primitive_desc fwd_pd(fwd, engine());
  typename BwdData::desc bwd(alg, a.image, weights_any, a.result, w.strides, w.dilates, w.pad_l,
                             w.pad_r);
  typename BwdData::primitive_desc pd(bwd, attr, engine(), fwd_pd);
  auto plan = std::make_shared<BackwardPlan>();
  plan->prim = BwdData(pd);
  plan->inputs = {port(DNNL_ARG_DIFF_DST, user_go, pd.diff_dst_desc(), true),
                  port(DNNL_ARG_WEIGHTS, user_w, pd.weights_desc(), true)};
  plan->output = port(DNNL_ARG_DIFF_SRC, user_gi, pd.diff_src_desc(), false);
  plan->scratchpad_md = pd.scratchpad_desc();
  return plan;
}

template <typename Fwd, typename BwdWeights>
std::shared_ptr<BackwardPlan> weights_plan(dnnl::algorithm alg, const ActivationDescs& a,
                                           const memory::desc& weights_any,
                                           const memory::desc& bias_md, const Window& w,
                                           const memory::desc& user_go, const memory::desc& user_in,
                                           const memory::desc& user_gw) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  typename Fwd::desc fwd(dnnl::prop_kind::forward_training, alg, a.image, weights_any, bias_md,
                         a.result, w.strides, w.dilates, w.pad_l, w.pad_r);
  typename Fwd::primitive_desc fwd_pd(fwd, engine());
  typename BwdWeights::desc bwd(alg, a.image, weights_any, bias_md, a.result, w.strides, w.dilates,
                                w.pad_l, w.pad_r);
  typename BwdWeights::primitive_desc pd(bwd, attr, engine(), fwd_pd);
  auto plan = std::make_shared<BackwardPlan>();
  plan->prim = BwdWeights(pd);
  plan->inputs = {port(DNNL_ARG_SRC, user_in, pd.src_desc(), true),
                  port(DNNL_ARG_DIFF_DST, user_go, pd.diff_dst_desc(), true)};
  plan->output = port(DNNL_ARG_DIFF_WEIGHTS, user_gw, pd.diff_weights_desc(), false);
  plan->bias_md = bias_md;
  plan->scratchpad_md = pd.scratchpad_desc();
  return plan;
}

memory::desc any_like(const memory::desc& md) {
  return memory::desc(md.dims(), memory::data_type::f32, memory::format_tag::any);
}

// Runs a plan on the callers' buffers (inputs[i] for plan.inputs[i], out, and bias or null).
void execute(const BackwardPlan& plan, const std::array<const void*, 2>& inputs, void* out,
             void* bias) {
  thread_local std::array<std::vector<std::byte>, 4> buffers;
  dnnl::stream& s = stream();
  dnnl::engine& e = engine();
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < 2; ++i) {
    const Port& pt = plan.inputs[i];
    memory user(pt.user_md, e, const_cast<void*>(inputs[i]));
    if (pt.reorder) {
      memory inner(pt.md, e, sized(buffers[i], pt.md.get_size()));
      pt.reorder->execute(s, user, inner);
      args.emplace(pt.arg, inner);
    } else {
      args.emplace(pt.arg, user);
    }
  }
  memory user_out(plan.output.user_md, e, out);
  memory inner_out = plan.output.reorder
                         ? memory(plan.output.md, e, sized(buffers[2], plan.output.md.get_size()))
                         : user_out;
  args.emplace(plan.output.arg, inner_out);
  if (bias != nullptr) args.emplace(DNNL_ARG_DIFF_BIAS, memory(plan.bias_md, e, bias));
  args.emplace(DNNL_ARG_SCRATCHPAD,
               memory(plan.scratchpad_md, e, sized(buffers[3], plan.scratchpad_md.get_size())));
  plan.prim.execute(s, args);
  if (plan.output.reorder) plan.output.reorder->execute(s, inner_out, user_out);
  s.wait();
}

// Finds or builds the plan under `key`; null when oneDNN refuses the geometry.
template <typename Build>
std::shared_ptr<const BackwardPlan> cached(const std::string& key, Build&& build) {
  std::shared_ptr<const BackwardPlan> plan = backward_plan_cache().find(key);
  if (plan) return plan;
  try {
    plan = build();
  } catch (const dnnl::error&) {
    return nullptr;
  }
  backward_plan_cache().insert(key, plan);
  return plan;
}

}  // namespace

bool onednn_convolution_backward_data(const Tensor& grad_input, const Tensor& grad_output,
                                      const Tensor& weight, const ConvParams& p, MemoryFormat fmt) {
  const std::string key = plan_key('d', grad_output, grad_input, weight, false, p, fmt);
  auto plan = cached(key, [&] {
    const ActivationDescs a = activation_descs(grad_input, grad_output, weight, fmt);
    const memory::desc user_w = user_weights_md(weight, p);
    const memory::desc user_go = plain_md(grad_output.sizes(), fmt);
    const memory::desc user_gi = plain_md(grad_input.sizes(), fmt);
    if (!p.transposed) {
      return data_plan<dnnl::convolution_forward, dnnl::convolution_backward_data>(
          dnnl::algorithm::convolution_direct, a, any_like(user_w), window(p), user_go, user_w,
          user_gi);
    }
    return data_plan<dnnl::deconvolution_forward, dnnl::deconvolution_backward_data>(
        dnnl::algorithm::deconvolution_direct, a, any_like(user_w), window(p), user_go, user_w,
        user_gi);
  });
  if (!plan) return false;
  execute(*plan, {grad_output.data_ptr(), weight.data_ptr()}, grad_input.data_ptr(), nullptr);
  return true;
}

bool onednn_convolution_backward_weights(const Tensor& grad_weight, const Tensor& grad_bias,
                                         const Tensor& grad_output, const Tensor& input,
                                         const ConvParams& p, MemoryFormat fmt) {
  const bool has_bias = grad_bias.defined();
  const std::string key = plan_key('w', grad_output, input, grad_weight, has_bias, p, fmt);
  auto plan = cached(key, [&] {
    const ActivationDescs a = activation_descs(input, grad_output, grad_weight, fmt);
    const memory::desc user_gw = user_weights_md(grad_weight, p);
    const memory::desc user_go = plain_md(grad_output.sizes(), fmt);
    const memory::desc user_in = plain_md(input.sizes(), fmt);
    const memory::desc bias_md =
        has_bias
            ? memory::desc({grad_output.size(1)}, memory::data_type::f32, memory::format_tag::a)
            : memory::desc();
    if (!p.transposed) {
      return weights_plan<dnnl::convolution_forward, dnnl::convolution_backward_weights>(
          dnnl::algorithm::convolution_direct, a, any_like(user_gw), bias_md, window(p), user_go,
          user_in, user_gw);
    }
    return weights_plan<dnnl::deconvolution_forward, dnnl::deconvolution_backward_weights>(
        dnnl::algorithm::deconvolution_direct, a, any_like(user_gw), bias_md, window(p), user_go,
        user_in, user_gw);
  });
  if (!plan) return false;
  execute(*plan, {input.data_ptr(), grad_output.data_ptr()}, grad_weight.data_ptr(),
          has_bias ? grad_bias.data_ptr() : nullptr);
  return true;
}

}  // namespace kiln::ops::conv
