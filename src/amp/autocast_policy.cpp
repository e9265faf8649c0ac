// What autocast does to each op's arguments (kiln/amp/autocast.h): PyTorch's CUDA autocast op
// lists, by kiln's op names, applied by the dispatcher's autocast hook.
#include "amp/autocast_state.h"

#include <kiln/amp/autocast.h>
#include <kiln/core/tensor.h>
#include <kiln/ops/registry.h>

#include <optional>
#include <string>
#include <unordered_map>

namespace kiln::amp {
namespace {

enum class Policy {
  LowerPrecision,  // the autocast dtype (matrix products, convolutions)
  Float32,         // float32 (range- or precision-sensitive ops)
  Widest,          // the widest floating type among the tensor arguments
};

const std::unordered_map<std::string, Policy>& policy_by_name() {
  static const std::unordered_map<std::string, Policy> table = [] {
    std::unordered_map<std::string, Policy> t;
    for (const char* op : {"mm", "bmm", "addmm", "baddbmm", "matmul", "linear", "convolution",
                           "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                           "conv_transpose3d", "scaled_dot_product_attention"}) {
      t.emplace(op, Policy::LowerPrecision);
    }
    for (const char* op : {"acos",
                           "asin",
                           "cosh",
                           "sinh",
                           "tan",
                           "erfinv",
                           "exp",
                           "expm1",
                           "log",
                           "log10",
                           "log2",
                           "log1p",
                           "reciprocal",
                           "rsqrt",
                           "pow",
                           "softplus",
                           "layer_norm",
                           "group_norm",
                           "rms_norm",
                           "sum",
                           "prod",
                           "cumsum",
                           "cumprod",
                           "softmax",
                           "log_softmax",
                           "linalg_vector_norm",
                           "cross_entropy_loss",
                           "nll_loss",
                           "nll_loss2d",
                           "mse_loss",
                           "l1_loss",
                           "smooth_l1_loss",
                           "huber_loss",
                           "kl_div",
                           "binary_cross_entropy_with_logits"}) {
      t.emplace(op, Policy::Float32);
    }
    for (const char* op :
         {"addcdiv", "addcmul", "atan2", "dot", "cat", "stack", "index_put", "scatter_add"}) {
      t.emplace(op, Policy::Widest);
    }
    return t;
  }();
  return table;
}

// The policy of each functional op whose name is listed (every overload), by declaration: the
// dispatcher's hook looks ops up by pointer, not by name, on every call under autocast.
std::optional<Policy> policy_of(const ops::OpDef& op) {
  static const std::unordered_map<const ops::OpDef*, Policy> table = [] {
    std::unordered_map<const ops::OpDef*, Policy> t;
    for (const ops::OpDef* def : ops::OpRegistry::instance().all()) {
      if (def->variant != ops::Variant::Functional) continue;
      const auto it = policy_by_name().find(def->name());
      if (it != policy_by_name().end()) t.emplace(def, it->second);
    }
    return t;
  }();
  const auto it = table.find(&op);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// A tensor autocast may cast: floating, not float64, on a device type with autocast on.
bool eligible(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == DType::Float64) return false;
  const DeviceType d = t.device().type();
  return (d == DeviceType::CPU || d == DeviceType::CUDA) && is_autocast_enabled(d);
}

template <typename F>
void for_each_tensor(ops::Stack& args, F&& f) {
  for (ops::IValue& v : args) {
    if (v.is_tensor()) {
      Tensor t = v.to_tensor();
      if (f(t)) v = ops::IValue(t);
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list = v.to_tensor_list();
      bool changed = false;
      for (Tensor& t : list) changed |= f(t);
      if (changed) v = ops::IValue(std::move(list));
    }
  }
}

// The dispatcher's autocast hook: casts the eligible tensor arguments of a listed functional op.
bool cast_for_autocast(const ops::OpDef& op, ops::Stack& args) {
  // In-place and out= calls (not in the table) write their own tensor's dtype, as PyTorch's
  // autocast leaves them.
  const std::optional<Policy> listed = policy_of(op);
  if (!listed) return false;
  const Policy policy = *listed;
  AutocastPause casting;  // the casts are ops too; they are not cast again
  std::optional<DType> widest;
  if (policy == Policy::Widest) {
    for_each_tensor(args, [&](Tensor& t) {
      if (eligible(t)) widest = widest ? promote_types(*widest, t.dtype()) : t.dtype();
      return false;
    });
  }
  for_each_tensor(args, [&](Tensor& t) {
    if (!eligible(t)) return false;
    const DType to = policy == Policy::LowerPrecision ? get_autocast_dtype(t.device().type())
                     : policy == Policy::Float32      ? DType::Float32
                                                      : *widest;
    if (t.dtype() == to) return false;
    t = t.to(to);
    return true;
  });
  return true;
}

[[maybe_unused]] const bool installed = (ops::set_autocast_hook(&cast_for_autocast), true);

}  // namespace
}  // namespace kiln::amp
