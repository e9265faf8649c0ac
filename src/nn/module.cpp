#include <kiln/autograd/grad_mode.h>
#include <kiln/nn/module.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_set>

namespace kiln::nn {

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}
Module::~Module() = default;

void Module::check_new_name(const std::string& name, const char* what) const {
  KILN_CHECK(!name.empty(), "{}: {} name can't be empty", type_name_, what);
  KILN_CHECK(name.find('.') == std::string::npos, "{}: {} name can't contain \".\", got \"{}\"",
             type_name_, what, name);
  // A name may be re-registered as the same kind (replacing it), never as another kind.
  const bool is_param = parameters_.contains(name), is_buffer = buffers_.contains(name),
             is_child = children_.contains(name);
  const std::string kind = what;
  KILN_CHECK((!is_param || kind == "parameter") && (!is_buffer || kind == "buffer") &&
                 (!is_child || kind == "module"),
             "{}: attribute \"{}\" already exists (as a {})", type_name_, name,
             is_param    ? "parameter"
             : is_buffer ? "buffer"
                         : "module");
}

Tensor Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  if (tensor.defined()) {
    if (!tensor.is_leaf()) tensor = tensor.detach();
    tensor.requires_grad_(requires_grad && tensor.is_floating_point());
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_new_name(name, "buffer");
  auto np = std::find(non_persistent_buffers_.begin(), non_persistent_buffers_.end(), name);
  if (persistent && np != non_persistent_buffers_.end()) non_persistent_buffers_.erase(np);
  if (!persistent && np == non_persistent_buffers_.end()) non_persistent_buffers_.push_back(name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::register_module_impl(std::string name, ModulePtr module) {
  check_new_name(name, "module");
  KILN_CHECK(module != nullptr, "{}.register_module: submodule \"{}\" is null", type_name_, name);
  children_.insert(std::move(name), std::move(module));
}

namespace {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace

// named_parameters / named_buffers: walk the modules (each once), listing each module's own
// defined tensors, skipping tensors already listed.
void Module::visit_modules(const std::string& prefix,
                           const std::function<void(const std::string&, const Module&)>& fn,
                           std::vector<const Module*>& seen) const {
  if (std::find(seen.begin(), seen.end(), this) != seen.end()) return;
  seen.push_back(this);
  fn(prefix, *this);
  for (const auto& [name, m] : children_) {
    if (m) m->visit_modules(join_name(prefix, name), fn, seen);
  }
}

OrderedDict<Tensor> Module::named_tensors(const std::string& prefix, bool recurse,
                                          bool buffers) const {
  OrderedDict<Tensor> out;
  std::unordered_set<const TensorImpl*> seen_tensors;
  auto add_own = [&](const std::string& p, const Module& m) {
    for (const auto& [name, t] : buffers ? m.buffers_ : m.parameters_) {
      if (!t.defined() || !seen_tensors.insert(t.impl()).second) continue;
      out.insert(join_name(p, name), t);
    }
  };
  if (!recurse) {
    add_own(prefix, *this);
    return out;
  }
  std::vector<const Module*> seen;
  visit_modules(prefix, add_own, seen);
  return out;
}

OrderedDict<Tensor> Module::named_parameters(const std::string& prefix, bool recurse) const {
  return named_tensors(prefix, recurse, /*buffers=*/false);
}

OrderedDict<Tensor> Module::named_buffers(const std::string& prefix, bool recurse) const {
  return named_tensors(prefix, recurse, /*buffers=*/true);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters("", recurse).values();
}
std::vector<Tensor> Module::buffers(bool recurse) const {
  return named_buffers("", recurse).values();
}

std::vector<ModulePtr> Module::children() const { return named_children().values(); }

OrderedDict<ModulePtr> Module::named_children() const {
  OrderedDict<ModulePtr> out;
  std::unordered_set<const Module*> seen;
  for (const auto& [name, m] : children_) {
    if (m && seen.insert(m.get()).second) out.insert(name, m);
  }
  return out;
}

ModulePtr Module::self_ptr() {
  // A module that no shared_ptr owns (one on the stack) is handed out without ownership.
  if (ModulePtr owned = weak_from_this().lock()) return owned;
  return ModulePtr(ModulePtr(), this);
}

OrderedDict<ModulePtr> Module::named_modules(const std::string& prefix) {
  OrderedDict<ModulePtr> out;
  std::vector<const Module*> seen;
  visit_modules(
      prefix,
      [&](const std::string& p, const Module& m) {
        out.insert(p, const_cast<Module&>(m).self_ptr());
      },
      seen);
  return out;
}

std::vector<ModulePtr> Module::modules() { return named_modules().values(); }

Tensor Module::get_parameter(const std::string& name) const {
  const Tensor* t = parameters_.find(name);
  return t ? *t : Tensor();
}
Tensor Module::get_buffer(const std::string& name) const {
  const Tensor* t = buffers_.find(name);
  return t ? *t : Tensor();
}
ModulePtr Module::get_submodule(const std::string& name) const {
  const ModulePtr* m = children_.find(name);
  return m ? *m : nullptr;
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [name, m] : children_) {
    if (m) m->train(on);
  }
}

namespace {

// PyTorch's `t.data = converted`: the TensorImpl takes the converted tensor's storage, geometry
// and dtype.
void take_data(const Tensor& t, const Tensor& converted) {
  TensorImpl* impl = t.impl();
  impl->set_storage(converted.storage());
  impl->set_sizes_and_strides(converted.sym_sizes(), converted.sym_strides(),
                              converted.sym_storage_offset());
  impl->set_dtype(converted.dtype());
}

void convert_in_place(const Tensor& t, DType dtype) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == dtype) return;
  take_data(t, t.detach().to(dtype).contiguous());
}

// Moves the data; the layout is kept as `to(device)` keeps it (dense tensors keep their strides).
void move_in_place(const Tensor& t, Device device) {
  if (!t.defined() || t.device() == device) return;
  take_data(t, t.detach().to(device));
}

}  // namespace

void Module::to(DType dtype) {
  KILN_CHECK(is_floating_point(dtype), "{}.to: expected a floating-point dtype, got {}", type_name_,
             dtype_name(dtype));
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters()) {
    convert_in_place(p, dtype);
    if (p.grad().defined() && p.grad().dtype() != dtype) {
      Tensor& g = const_cast<Tensor&>(p).mutable_grad();
      g = g.detach().to(dtype);
    }
  }
  for (const Tensor& b : buffers()) convert_in_place(b, dtype);
}

void Module::to(Device device) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters()) {
    move_in_place(p, device);
    if (p.grad().defined() && p.grad().device() != device) {
      Tensor& g = const_cast<Tensor&>(p).mutable_grad();
      g = g.detach().to(device);
    }
  }
  for (const Tensor& b : buffers()) move_in_place(b, device);
}

void Module::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (Tensor p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = Tensor();
    } else {
      Tensor g = p.grad().detach();
      g.zero_();
      p.mutable_grad() = g;
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [name, m] : children_) {
    if (m) m->apply(fn);
  }
  fn(*this);
}

void Module::collect_state_dict(const std::string& prefix, OrderedDict<Tensor>& out) const {
  for (const auto& [name, t] : parameters_) {
    if (t.defined()) out.insert(prefix + name, t.detach());
  }
  for (const auto& [name, t] : buffers_) {
    if (!t.defined()) continue;
    if (std::find(non_persistent_buffers_.begin(), non_persistent_buffers_.end(), name) !=
        non_persistent_buffers_.end())
      continue;
    out.insert(prefix + name, t.detach());
  }
  for (const auto& [name, m] : children_) {
    if (m) m->collect_state_dict(prefix + name + ".", out);
  }
}

OrderedDict<Tensor> Module::state_dict(const std::string& prefix) const {
  OrderedDict<Tensor> out;
  collect_state_dict(prefix.empty() ? "" : prefix + ".", out);
  return out;
}

namespace {

std::string torch_size(IntList sizes) {
  return fmt::format("torch.Size([{}])", fmt::join(sizes, ", "));
}

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i) out += ", ";
    out += "\"" + keys[i] + "\"";
  }
  return out;
}

}  // namespace

LoadStateDictResult Module::load_state_dict(const OrderedDict<Tensor>& state_dict, bool strict) {
  LoadStateDictResult result;
  std::vector<std::string> errors;
  OrderedDict<Tensor> own = this->state_dict();
  autograd::NoGradGuard no_grad;
  for (const auto& [key, target] : own) {
    const Tensor* src = state_dict.find(key);
    if (src == nullptr) {
      result.missing_keys.push_back(key);
      continue;
    }
    KILN_CHECK(src->defined(), "{}.load_state_dict: the value of \"{}\" is an undefined tensor",
               type_name_, key);
    if (IntList(src->sizes()) != IntList(target.sizes())) {
      errors.push_back(fmt::format(
          "size mismatch for {}: copying a param with shape {} from checkpoint, the shape in "
          "current model is {}.",
          key, torch_size(src->sizes()), torch_size(target.sizes())));
      continue;
    }
    Tensor dst = target;
    dst.copy_(*src);
  }
  for (const auto& [key, value] : state_dict) {
    if (!own.contains(key)) result.unexpected_keys.push_back(key);
  }
  std::vector<std::string> key_errors;
  if (strict) {
    if (!result.missing_keys.empty())
      key_errors.push_back("Missing key(s) in state_dict: " + quoted_list(result.missing_keys) +
                           ". ");
    if (!result.unexpected_keys.empty())
      key_errors.push_back(
          "Unexpected key(s) in state_dict: " + quoted_list(result.unexpected_keys) + ". ");
  }
  key_errors.insert(key_errors.end(), errors.begin(), errors.end());
  if (!key_errors.empty()) {
    std::string msg = "Error(s) in loading state_dict for " + type_name_ + ":";
    for (const std::string& e : key_errors) msg += "\n\t" + e;
    throw_error(msg);
  }
  return result;
}

LoadStateDictResult Module::load_state_dict(const std::map<std::string, Tensor>& state_dict,
                                            bool strict) {
  OrderedDict<Tensor> ordered;
  for (const auto& [key, value] : state_dict) ordered.insert(key, value);
  return load_state_dict(ordered, strict);
}

Tensor Module::forward(const Tensor&) {
  KILN_FAIL("{}: forward(const Tensor&) is not defined for this module type", type_name_);
}

namespace {

// Python's _addindent: every line after the first is indented by n spaces.
std::string add_indent(const std::string& s, int n) {
  std::string out;
  std::string pad(static_cast<size_t>(n), ' ');
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

}  // namespace

std::string Module::repr() const {
  std::vector<std::string> extra_lines;
  std::string extra = extra_repr();
  if (!extra.empty()) {
    std::stringstream ss(extra);
    std::string line;
    while (std::getline(ss, line)) extra_lines.push_back(line);
  }
  std::vector<std::string> child_lines;
  for (const auto& [name, m] : children_) {
    std::string mod_str = m ? add_indent(m->repr(), 2) : "None";
    child_lines.push_back("(" + name + "): " + mod_str);
  }
  std::string out = type_name_ + "(";
  if (extra_lines.size() == 1 && child_lines.empty()) {
    out += extra_lines[0];
  } else if (!extra_lines.empty() || !child_lines.empty()) {
    out += "\n";
    for (const auto& l : extra_lines) out += "  " + l + "\n";
    for (const auto& l : child_lines) out += "  " + l + "\n";
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  module.pretty_print(os);
  return os;
}

std::string py_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string py_bool(bool value) { return value ? "True" : "False"; }

std::string py_tuple(IntList values) {
  if (values.size() == 1) return fmt::format("({},)", values[0]);
  return fmt::format("({})", fmt::join(values, ", "));
}

}  // namespace kiln::nn
