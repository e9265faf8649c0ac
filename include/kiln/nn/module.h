#pragma once
// kiln::nn::Module: the base of every layer, as torch.nn.Module. A module owns named parameters
// (leaf tensors that require grad), buffers (state such as running statistics) and submodules,
// each kept in registration order, and derives PyTorch's dotted names from them
// ("encoder.layer.0.attention.self.query.weight"). Modules are held by std::shared_ptr.
//
// Layers keep their parameters in Tensor members as well (`weight`, `bias`): a Tensor is a shared
// handle, and load_state_dict / to(dtype) change the registered tensors in place, so the members
// and any optimizer holding the same tensors see the change.
#include <kiln/core/tensor.h>
#include <kiln/nn/ordered_dict.h>

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::nn {

class Module;
using ModulePtr = std::shared_ptr<Module>;

// What load_state_dict found: keys the module expects but the dict lacks, and keys the dict has
// that the module does not expect (PyTorch's _IncompatibleKeys).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // type_name is what name() returns and what printing and error messages show ("Linear").
  explicit Module(std::string type_name = "Module");
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return type_name_; }

  // ---- registration ----
  // Registers (or replaces) a parameter. A tensor with history is detached first (a parameter is
  // a leaf); requires_grad is set on it (integer tensors never require grad). An undefined tensor
  // registers the name with no parameter, as `register_parameter("bias", None)`.
  Tensor register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // A buffer: module state that is not trained. Non-persistent buffers stay out of state_dict().
  Tensor register_buffer(std::string name, Tensor tensor, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module: M must derive from Module");
    register_module_impl(std::move(name), module);
    return module;
  }
  // Replaces a registered submodule (the name must exist).
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    KILN_CHECK(children_.contains(name), "{}.replace_module: no submodule named \"{}\"", name_(),
               name);
    children_.insert(name, module);
    return module;
  }

  // ---- traversal (PyTorch's order: own entries in registration order, then each child's) ----
  // Shared tensors and modules are listed once (PyTorch's remove_duplicate=True).
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<Tensor> named_parameters(const std::string& prefix = "", bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<Tensor> named_buffers(const std::string& prefix = "", bool recurse = true) const;
  std::vector<ModulePtr> children() const;
  OrderedDict<ModulePtr> named_children() const;
  // This module first (under the name prefix), then every submodule depth-first.
  std::vector<ModulePtr> modules();
  OrderedDict<ModulePtr> named_modules(const std::string& prefix = "");

  // Direct entries by name (nullptr / undefined when absent).
  Tensor get_parameter(const std::string& name) const;
  Tensor get_buffer(const std::string& name) const;
  ModulePtr get_submodule(const std::string& name) const;

  // ---- modes, dtype, gradients ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Converts every floating-point parameter and buffer (and parameter gradient) to dtype in
  // place: the TensorImpl keeps its identity and takes the converted data, as PyTorch's
  // `param.data = param.to(dtype)` does, so optimizers holding the parameters keep working.
  void to(DType dtype);
  // Moves every parameter and buffer (and parameter gradient) to `device` in place, as
  // PyTorch's module.to(device): the tensors keep their identity (optimizers built before the
  // move keep working) and take storage on the device.
  void to(Device device);

  // set_to_none: drop gradients; otherwise zero them in place (detached).
  void zero_grad(bool set_to_none = true);

  // fn on every submodule (children first, depth-first), then on this module, as PyTorch.
  void apply(const std::function<void(Module&)>& fn);

  // ---- checkpoints ----
  // Parameters and persistent buffers under dotted names, detached (sharing storage). Tied
  // tensors appear under every name, as in PyTorch.
  OrderedDict<Tensor> state_dict(const std::string& prefix = "") const;
  // Copies values into the registered tensors in place (under no_grad, converting dtype). A
  // shape mismatch always raises kiln::Error naming the key and both shapes; missing or
  // unexpected keys raise only when strict.
  LoadStateDictResult load_state_dict(const OrderedDict<Tensor>& state_dict, bool strict = true);
  // The same from a name -> tensor map (what kiln::safetensors::load returns).
  LoadStateDictResult load_state_dict(const std::map<std::string, Tensor>& state_dict,
                                      bool strict = true);

  // ---- forward ----
  // The single-input forward; modules with other signatures add their own overloads. The
  // default raises kiln::Error naming the module type.
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  // ---- printing (PyTorch's repr) ----
  // What goes between the parentheses of this module's own line ("in_features=3, ...").
  virtual std::string extra_repr() const { return ""; }
  // The full nested repr, as print(module) in Python.
  virtual std::string repr() const;
  void pretty_print(std::ostream& os) const { os << repr(); }

 protected:
  // Own entries, for subclasses (containers).
  const OrderedDict<Tensor>& own_parameters() const { return parameters_; }
  const OrderedDict<Tensor>& own_buffers() const { return buffers_; }
  const OrderedDict<ModulePtr>& own_children() const { return children_; }
  void register_module_impl(std::string name, ModulePtr module);
  const std::string& name_() const { return type_name_; }
  bool training_ = true;

 private:
  void check_new_name(const std::string& name, const char* what) const;
  // fn(prefix, module) on this module and every submodule, depth-first, each module once.
  void visit_modules(const std::string& prefix,
                     const std::function<void(const std::string&, const Module&)>& fn,
                     std::vector<const Module*>& seen) const;
  OrderedDict<Tensor> named_tensors(const std::string& prefix, bool recurse, bool buffers) const;
  ModulePtr self_ptr();
  void collect_state_dict(const std::string& prefix, OrderedDict<Tensor>& out) const;

  std::string type_name_;
  OrderedDict<Tensor> parameters_;
  OrderedDict<Tensor> buffers_;
  std::vector<std::string> non_persistent_buffers_;
  OrderedDict<ModulePtr> children_;
};

std::ostream& operator<<(std::ostream& os, const Module& module);

// Python's repr of a float ("0.1", "1e-05", "1.0") and of a bool ("True"), for extra_repr.
std::string py_float(double value);
std::string py_bool(bool value);
// Python's tuple repr: "(3, 3)", "(4,)".
std::string py_tuple(IntList values);

}  // namespace kiln::nn
