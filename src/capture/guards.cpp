#include "capture/guards.h"

#include "amp/autocast_state.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

namespace kiln::capture {

namespace {

std::string dims_str(IntList v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A non-tensor leaf as the guard message shows it.
std::string leaf_str(const ops::IValue& v) {
  if (v.is_none()) return "None";
  if (v.is_int()) return std::to_string(v.to_int());
  if (v.is_double()) return fmt::format("{}", v.to_double());
  if (v.is_bool()) return v.to_bool() ? "true" : "false";
  if (v.is_string()) return fmt::format("\"{}\"", v.to_string());
  if (v.is_scalar()) return v.to_scalar().str();
  if (std::holds_alternative<DType>(v.variant())) return std::string(dtype_name(v.to_dtype()));
  if (v.is_tensor()) return "undefined tensor";
  return "a value";
}

bool same_leaf(const ops::IValue& a, const ops::IValue& b) {
  if (a.variant().index() != b.variant().index()) return false;
  if (a.is_none()) return true;
  if (a.is_int()) return a.to_int() == b.to_int();
  if (a.is_double()) return a.to_double() == b.to_double();
  if (a.is_bool()) return a.to_bool() == b.to_bool();
  if (a.is_string()) return a.to_string() == b.to_string();
  if (a.is_scalar()) {
    const Scalar x = a.to_scalar(), y = b.to_scalar();
    return x.is_floating_point() == y.is_floating_point() && x.is_bool() == y.is_bool() && x == y;
  }
  if (std::holds_alternative<DType>(a.variant())) return a.to_dtype() == b.to_dtype();
  if (a.is_tensor()) return a.to_tensor().defined() == b.to_tensor().defined();
  return false;
}

}  // namespace

GlobalState GlobalState::current() {
  return GlobalState{autograd::GradMode::is_enabled(), autograd::InferenceMode::is_enabled(),
                     amp::autocast_state_key()};
}

Guards::TensorFacts Guards::facts_of(const Tensor& t) {
  return TensorFacts{
      t.dtype(),         t.device(),        DimVector(t.sizes()),         DimVector(t.strides()),
      t.requires_grad(), t.is_contiguous(), t.impl()->is_wrapped_number()};
}

std::optional<std::string> Guards::tensor_change(const std::string& what, const TensorFacts& had,
                                                 const Tensor& now, bool ignore_sizes) {
  if (!now.defined()) return fmt::format("{}: was a tensor, now undefined", what);
  if (now.dtype() != had.dtype) {
    return fmt::format("{}: dtype changed from {} to {}", what, dtype_name(had.dtype),
                       dtype_name(now.dtype()));
  }
  if (now.device() != had.device) {
    return fmt::format("{}: device changed from {} to {}", what, had.device.str(),
                       now.device().str());
  }
  const IntList sizes = now.sizes();
  if (sizes.size() != had.sizes.size()) {
    return fmt::format("{}: rank changed from {} to {}", what, had.sizes.size(), sizes.size());
  }
  bool sizes_changed = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == had.sizes[d] || had.is_dynamic(d)) continue;
    sizes_changed = true;
    if (!ignore_sizes) {
      return fmt::format("{}: size of dim {} changed from {} to {}", what, d, had.sizes[d],
                         sizes[d]);
    }
  }
  if (had.dynamic_mask != 0) {
    if (!now.is_contiguous()) {
      return fmt::format("{}: is no longer contiguous (strides {}; it has dynamic dims)", what,
                         dims_str(now.strides()));
    }
  } else if (ignore_sizes && sizes_changed) {
    if (now.is_contiguous() != had.contiguous) {
      return fmt::format("{}: contiguity changed from {} to {}", what, had.contiguous,
                         now.is_contiguous());
    }
  } else if (now.strides() != IntList(had.strides)) {
    return fmt::format("{}: strides changed from {} to {}", what, dims_str(had.strides),
                       dims_str(now.strides()));
  }
  if (now.requires_grad() != had.requires_grad) {
    return fmt::format("{}: requires_grad changed from {} to {}", what, had.requires_grad,
                       now.requires_grad());
  }
  if (now.impl()->is_wrapped_number() != had.wrapped_number) {
    return fmt::format("{}: wrapped number changed from {} to {}", what, had.wrapped_number,
                       now.impl()->is_wrapped_number());
  }
  return std::nullopt;
}

Guards::Guards(const Leaves& args, GlobalState state, const std::shared_ptr<nn::Module>& module,
               std::span<const DynamicDim> dynamic)
    : leaves_(args), state_(state), module_(module.get()) {
  for (const ops::IValue& leaf : args) {
    if (leaf.is_tensor() && leaf.to_tensor().defined()) {
      leaf_facts_.emplace_back(facts_of(leaf.to_tensor()));
      leaves_[leaf_facts_.size() - 1] = ops::IValue(Tensor());  // do not keep the argument alive
    } else {
      leaf_facts_.emplace_back(std::nullopt);
    }
  }
  for (const DynamicDim& d : dynamic) {
    KILN_CHECK(d.arg < leaf_facts_.size() && leaf_facts_[d.arg].has_value(),
               "guards: dynamic dim of arg {}, which is not a tensor", d.arg);
    TensorFacts& f = *leaf_facts_[d.arg];
    const int64_t rank = static_cast<int64_t>(f.sizes.size());
    const int64_t dim = d.dim < 0 ? d.dim + rank : d.dim;
    KILN_CHECK(dim >= 0 && dim < rank && dim < 64, "guards: dynamic dim {} of arg {} (rank {})",
               d.dim, d.arg, rank);
    f.dynamic_mask |= uint64_t{1} << dim;
  }
  if (!module_) return;
  for (const auto& item : module_->named_modules()) {
    training_.emplace_back(item.second.get(), item.second->is_training());
    module_names_.push_back(item.first.empty() ? "module" : item.first);
  }
  for (const auto& item : module_->named_parameters()) {
    module_tensors_.push_back(item.second);
    module_tensor_names_.push_back(item.first);
    module_tensor_facts_.push_back(facts_of(item.second));
  }
  for (const auto& item : module_->named_buffers()) {
    module_tensors_.push_back(item.second);
    module_tensor_names_.push_back(item.first);
    module_tensor_facts_.push_back(item.second.defined() ? facts_of(item.second) : TensorFacts{});
  }
}

bool Guards::same_facts(const TensorFacts& f, const Tensor& t) {
  if (!t.defined() || t.dtype() != f.dtype || t.device() != f.device ||
      t.requires_grad() != f.requires_grad || t.impl()->is_wrapped_number() != f.wrapped_number) {
    return false;
  }
  if (f.dynamic_mask == 0)
    return t.sizes() == IntList(f.sizes) && t.strides() == IntList(f.strides);
  const IntList sizes = t.sizes();
  if (sizes.size() != f.sizes.size() || !t.is_contiguous()) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!f.is_dynamic(d) && sizes[d] != f.sizes[d]) return false;
  }
  return true;
}

std::vector<Tensor> Guards::current_module_tensors() const {
  std::vector<Tensor> now = module_->parameters();
  for (Tensor& b : module_->buffers()) now.push_back(std::move(b));
  return now;
}

// The cache-hit path: the same checks as first_failure, without building messages.
bool Guards::check(const Leaves& args, GlobalState state) const {
  if (args.size() != leaves_.size() || state.grad_enabled != state_.grad_enabled ||
      state.inference_mode != state_.inference_mode || state.autocast != state_.autocast) {
    return false;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const ops::IValue& a = args[i];
    if (const auto& f = leaf_facts_[i]) {
      if (!a.is_tensor() || !same_facts(*f, a.to_tensor())) return false;
    } else if (!same_leaf(leaves_[i], a)) {
      return false;
    }
  }
  if (module_ == nullptr) return true;
  for (const auto& [m, training] : training_) {
    if (m->is_training() != training) return false;
  }
  const std::vector<Tensor> now = current_module_tensors();
  if (now.size() != module_tensors_.size()) return false;
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i].impl() != module_tensors_[i].impl()) return false;
    if (now[i].defined() && !same_facts(module_tensor_facts_[i], now[i])) return false;
  }
  return true;
}

std::optional<std::string> Guards::first_failure(const Leaves& args, GlobalState state) const {
  return first_failure_impl(args, state, /*ignore_sizes=*/false);
}

std::optional<std::vector<DynamicDim>> Guards::size_only_changes(const Leaves& args,
                                                                 GlobalState state) const {
  if (first_failure_impl(args, state, /*ignore_sizes=*/true)) return std::nullopt;
  std::vector<DynamicDim> changed;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& f = leaf_facts_[i];
    if (!f) continue;
    const IntList sizes = args[i].to_tensor().sizes();
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] != f->sizes[d] && !f->is_dynamic(d)) {
        changed.push_back(DynamicDim{i, static_cast<int64_t>(d)});
      }
    }
  }
  return changed;
}

std::optional<std::string> Guards::first_failure_impl(const Leaves& args, GlobalState state,
                                                      bool ignore_sizes) const {
  if (state.grad_enabled != state_.grad_enabled) {
    return fmt::format("grad mode changed from {} to {}",
                       state_.grad_enabled ? "enabled" : "disabled",
                       state.grad_enabled ? "enabled" : "disabled");
  }
  if (state.inference_mode != state_.inference_mode) {
    return fmt::format("inference mode changed from {} to {}", state_.inference_mode,
                       state.inference_mode);
  }
  if (state.autocast != state_.autocast) {
    return fmt::format("autocast changed from {} to {}",
                       amp::describe_autocast_state(state_.autocast),
                       amp::describe_autocast_state(state.autocast));
  }
  if (args.size() != leaves_.size()) {
    return fmt::format("the arguments' structure changed ({} leaves, was {})", args.size(),
                       leaves_.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string what = fmt::format("arg {}", i);
    if (const auto& f = leaf_facts_[i]) {
      if (!args[i].is_tensor())
        return fmt::format("{}: was a tensor, now {}", what, leaf_str(args[i]));
      if (auto change = tensor_change(what, *f, args[i].to_tensor(), ignore_sizes)) return change;
    } else if (!same_leaf(leaves_[i], args[i])) {
      return fmt::format("{}: changed from {} to {}", what, leaf_str(leaves_[i]),
                         leaf_str(args[i]));
    }
  }
  if (module_ == nullptr) return std::nullopt;
  for (size_t i = 0; i < training_.size(); ++i) {
    if (training_[i].first->is_training() != training_[i].second) {
      return fmt::format("{}.training changed from {} to {}", module_names_[i], training_[i].second,
                         !training_[i].second);
    }
  }
  const std::vector<Tensor> now = current_module_tensors();
  if (now.size() != module_tensors_.size()) {
    return fmt::format("the module's parameters and buffers changed ({} tensors, was {})",
                       now.size(), module_tensors_.size());
  }
  for (size_t i = 0; i < now.size(); ++i) {
    const std::string what = fmt::format("{} (module tensor)", module_tensor_names_[i]);
    if (now[i].impl() != module_tensors_[i].impl()) {
      return fmt::format("{}: replaced by another tensor", what);
    }
    if (!now[i].defined()) continue;
    if (auto change = tensor_change(what, module_tensor_facts_[i], now[i])) return change;
  }
  return std::nullopt;
}

std::vector<std::string> Guards::describe() const {
  std::vector<std::string> out;
  out.push_back(fmt::format("grad mode is {}", state_.grad_enabled ? "enabled" : "disabled"));
  out.push_back(fmt::format("inference mode is {}", state_.inference_mode ? "on" : "off"));
  out.push_back(amp::describe_autocast_state(state_.autocast));
  for (size_t i = 0; i < leaves_.size(); ++i) {
    if (const auto& f = leaf_facts_[i]) {
      if (f->dynamic_mask != 0) {
        std::string sizes = "[";
        for (size_t d = 0; d < f->sizes.size(); ++d) {
          sizes += (d ? ", " : "") +
                   (f->is_dynamic(d) ? std::string("dynamic") : std::to_string(f->sizes[d]));
        }
        out.push_back(
            fmt::format("arg {}: tensor {} on {}, sizes {}], contiguous, requires_grad={}", i,
                        dtype_name(f->dtype), f->device.str(), sizes, f->requires_grad));
        continue;
      }
      out.push_back(fmt::format("arg {}: tensor {} on {}, sizes {}, strides {}, requires_grad={}",
                                i, dtype_name(f->dtype), f->device.str(), dims_str(f->sizes),
                                dims_str(f->strides), f->requires_grad));
    } else {
      out.push_back(fmt::format("arg {} == {}", i, leaf_str(leaves_[i])));
    }
  }
  for (size_t i = 0; i < training_.size(); ++i) {
    out.push_back(fmt::format("{}.training == {}", module_names_[i], training_[i].second));
  }
  for (size_t i = 0; i < module_tensors_.size(); ++i) {
    if (!module_tensors_[i].defined()) continue;
    const TensorFacts& f = module_tensor_facts_[i];
    out.push_back(fmt::format("{}: the same tensor, {} sizes {}, requires_grad={}",
                              module_tensor_names_[i], dtype_name(f.dtype), dims_str(f.sizes),
                              f.requires_grad));
  }
  return out;
}

}  // namespace kiln::capture
