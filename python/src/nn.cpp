// kiln.nn's native part (kiln._C.nn): kiln::nn::Module as the Python class kiln.nn.Module, which
// Python code subclasses (a trampoline sends C++ callers of forward, train and extra_repr to the
// Python overrides), the C++ layers as its subclasses with PyTorch's constructor signatures, and
// kiln.nn.init, gradient clipping and safetensors checkpoints. python/kiln/nn adds the rest of
// torch.nn.Module's Python protocol (attribute registration, traversal, state dicts) on top.
#include <pybind11/stl.h>

#include <kiln/nn/nn.h>
#include <kiln/optim/clip_grad.h>

#include "bindings.h"

namespace kiln::python {

// The module of a Python object as a shared_ptr that also owns a reference to the Python object:
// a C++ parent or container can outlive every Python reference to its child, and the Python
// object carries what the C++ object lacks (a Python subclass's forward, its __dict__). Used for
// every module that Python hands to the C++ tree (models.cpp too).
nn::ModulePtr module_holder(py::handle obj) {
  if (!py::isinstance<nn::Module>(obj)) {
    throw py::type_error(fmt::format("expected a kiln.nn.Module, got {}", type_name_of(obj)));
  }
  auto held = obj.cast<nn::ModulePtr>();
  std::shared_ptr<PyObject> keeper(obj.inc_ref().ptr(), [](PyObject* p) {
    // The last C++ owner may go away on any thread; at interpreter exit the object is leaked.
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(p);
  });
  return nn::ModulePtr(keeper, held.get());
}

namespace {

using nn::Module;
using nn::ModulePtr;
using namespace pybind11::literals;

// Module's protected members, read through pointers to members named in a derived class (the
// legal way to reach them without changing Module): the own registries, with the entries that
// are registered as None, and the module's own training flag.
struct ModuleAccess : Module {
  using Module::own_buffers;
  using Module::own_children;
  using Module::own_parameters;
  using Module::training_;
};
const nn::OrderedDict<Tensor>& own_parameters(const Module& m) {
  return (m.*(&ModuleAccess::own_parameters))();
}
const nn::OrderedDict<Tensor>& own_buffers(const Module& m) {
  return (m.*(&ModuleAccess::own_buffers))();
}
const nn::OrderedDict<ModulePtr>& own_children(const Module& m) {
  return (m.*(&ModuleAccess::own_children))();
}

// The C++ side of a Python subclass of kiln.nn.Module: C++ callers (Sequential, a compiled
// module, a parent's repr or train) reach the Python methods.
class PyModule : public Module {
 public:
  using Module::Module;

  Tensor forward(const Tensor& input) override {
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Module*>(this), "forward");
    if (!override) return Module::forward(input);
    py::object out = override(input);
    if (auto t = as_tensor(out)) return *t;
    throw py::type_error(fmt::format(
        "{}.forward: a C++ caller (a container such as Sequential, or a compiled module) calls "
        "it with one tensor and needs one tensor back, got {}",
        name(), type_name_of(out)));
  }
  void train(bool on) override { PYBIND11_OVERRIDE(void, Module, train, on); }
  std::string extra_repr() const override { PYBIND11_OVERRIDE(std::string, Module, extra_repr, ); }
};

using ModuleClass = py::class_<Module, PyModule, std::shared_ptr<Module>>;

// Constructs a bound class's C++ object from inside an __init__ that also sees the Python object
// (to read its class name or keep Python-side settings in its __dict__), as py::init does.
template <class Cls>
void construct(py::detail::value_and_holder& v_h, typename Cls::holder_type holder) {
  py::detail::initimpl::construct<Cls>(v_h, std::move(holder), Py_TYPE(v_h.inst) != v_h.type->type);
}
py::handle self_of(py::detail::value_and_holder& v_h) {
  return py::handle(reinterpret_cast<PyObject*>(v_h.inst));
}

// The kiln.nn.Parameter object for a registered parameter (one Python object per tensor while
// it is referenced, so `layer.weight is layer.weight`); None for an undefined tensor.
py::object parameter_object(const Tensor& t) {
  if (!t.defined()) return py::none();
  // Looked up once and kept for the life of the process (a handle, never released: no
  // destructor runs after the interpreter is gone).
  static py::handle as_parameter =
      py::object(py::module_::import("kiln.nn.parameter").attr("_as_parameter")).release();
  return as_parameter(t);
}
py::object tensor_or_none(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

// Whether Python may replace a registered entry: Python modules and containers read their
// registries, while the other C++ layers also hold their entries in members that a replacement
// would leave behind (those that may be replaced are properties, which update both).
bool registry_is_truth(const Module& m) {
  return dynamic_cast<const PyModule*>(&m) || dynamic_cast<const nn::Sequential*>(&m) ||
         dynamic_cast<const nn::ModuleList*>(&m) || dynamic_cast<const nn::ModuleDict*>(&m);
}

const char* entry_kind(const Module& m, const std::string& name) {
  if (own_parameters(m).contains(name)) return "parameter";
  if (own_buffers(m).contains(name)) return "buffer";
  if (own_children(m).contains(name)) return "module";
  return nullptr;
}

void check_replaceable(const Module& m, const std::string& name) {
  const char* kind = entry_kind(m, name);
  if (kind == nullptr || registry_is_truth(m)) return;
  const bool is_module = std::string_view(kind) == "module";
  throw Error(fmt::format(
      "{}: cannot replace the {} \"{}\" from Python: the C++ layer also holds it in a member "
      "that its forward reads; {}",
      m.name(), kind, name,
      is_module ? "load new weights into it instead (load_state_dict)"
                : fmt::format("change it in place instead (with kiln.no_grad(): "
                              "module.{}.copy_(value), or load_state_dict)",
                              name)));
}

py::list pairs(const nn::OrderedDict<Tensor>& dict) {
  py::list out;
  for (const auto& [name, t] : dict) out.append(py::make_tuple(name, t));
  return out;
}

// ---- argument conversions ----

// An int or a sequence of ints (PyTorch's _size_2_t and friends); one int stays one entry, so
// that layers print it as PyTorch does.
std::vector<int64_t> int_list(py::handle obj, const char* what) {
  if (py::isinstance<py::int_>(obj)) return {obj.cast<int64_t>()};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    std::vector<int64_t> out;
    for (py::handle item : obj.cast<py::sequence>()) {
      if (!py::isinstance<py::int_>(item)) {
        throw py::type_error(fmt::format("{}: expected ints, got {}", what, type_name_of(item)));
      }
      out.push_back(item.cast<int64_t>());
    }
    return out;
  }
  throw py::type_error(
      fmt::format("{}: expected an int or a tuple of ints, got {}", what, type_name_of(obj)));
}

// PyTorch's factory keywords of a layer constructor: the layer is built in float32 on the CPU,
// then converted.
template <class M>
std::shared_ptr<M> placed(std::shared_ptr<M> m, py::handle device, py::handle dtype) {
  if (!device.is_none()) {
    auto d = as_device(device);
    if (!d) throw py::type_error("device: expected a kiln.device or a string such as 'cpu'");
    KILN_CHECK(d->is_cpu(), "{}: kiln's Python layers are built on the CPU, got device={}",
               m->name(), d->str());
  }
  if (!dtype.is_none()) {
    auto dt = as_dtype(dtype);
    if (!dt) throw py::type_error("dtype: expected a kiln.dtype");
    m->to(*dt);
  }
  return m;
}

// torch.nn's legacy size_average / reduce arguments over the reduction string, as
// torch.nn._reduction.legacy_get_string.
std::string reduction_string(py::handle size_average, py::handle reduce, std::string reduction) {
  if (size_average.is_none() && reduce.is_none()) return reduction;
  bool avg = size_average.is_none() || size_average.cast<bool>();
  bool red = reduce.is_none() || reduce.cast<bool>();
  return avg && red ? "mean" : red ? "sum" : "none";
}
ReductionArg reduction_arg(const std::string& name) { return ReductionArg(std::string_view(name)); }
std::string reduction_name(Reduction r) {
  return r == Reduction::None ? "none" : r == Reduction::Sum ? "sum" : "mean";
}

// ---- property helpers for the C++ layers ----

// A parameter member: reading gives the kiln.nn.Parameter; assigning (a Parameter or None,
// checked by Module.__setattr__) replaces both the registered tensor and the member.
template <class M, class... O>
void param_property(py::class_<M, O...>& cls, const char* name, Tensor M::*member) {
  std::string key = name;
  cls.def_property(
      name, [member](const M& m) { return parameter_object(m.*member); },
      [member, key](M& m, std::optional<Tensor> t) {
        Tensor v = t.value_or(Tensor());
        m.*member = m.register_parameter(key, v, v.defined() && v.requires_grad());
      });
}
// A buffer member (a plain tensor).
template <class M, class... O>
void buffer_property(py::class_<M, O...>& cls, const char* name, Tensor M::*member) {
  std::string key = name;
  cls.def_property(
      name, [member](const M& m) { return tensor_or_none(m.*member); },
      [member, key](M& m, std::optional<Tensor> t) {
        m.*member = m.register_buffer(key, t.value_or(Tensor()));
      });
}

template <class M>
using Layer = py::class_<M, Module, std::shared_ptr<M>>;

// ---- kiln.nn.Module ----

void bind_module(py::module_& nnm) {
  ModuleClass cls(nnm, "Module", py::dynamic_attr(),
                  "Base class of every layer, as torch.nn.Module (kiln::nn::Module)");
  // Module() in Python, or super().__init__() in a subclass: the C++ module takes the Python
  // class's name, which its repr and error messages show.
  cls.def(
      "__init__",
      [](py::detail::value_and_holder& v_h, const py::args& args, const py::kwargs& kwargs) {
        std::string type_name = type_name_of(self_of(v_h));
        if (!args.empty() || !kwargs.empty()) {
          throw py::type_error(type_name + ".__init__() (kiln.nn.Module's) takes no arguments");
        }
        construct<ModuleClass>(v_h, std::make_shared<PyModule>(type_name));
      },
      py::detail::is_new_style_constructor());
  cls.def(
         "forward",
         [](Module& m, const Tensor& input) {
           PythonCallSite site;
           return m.forward(input);
         },
         "input"_a)
      .def(
          "train",
          [](py::object self, bool mode) {
            self.cast<Module&>().train(mode);
            return self;
          },
          "mode"_a = true)
      .def("extra_repr", [](const Module& m) { return m.extra_repr(); })
      .def("__repr__", &Module::repr)
      .def_property("training", &Module::is_training,
                    [](Module& m, bool on) { m.*(&ModuleAccess::training_) = on; })
      .def("zero_grad", &Module::zero_grad, "set_to_none"_a = true)
      .def("_to_dtype",
           [](Module& m, py::handle dtype) {
             auto dt = as_dtype(dtype);
             if (!dt) throw py::type_error("Module.to: expected a kiln.dtype");
             m.to(*dt);
           })
      .def("_type_name", &Module::name)
      // Whether __init__ has built the C++ module (a Python subclass may set plain attributes
      // before calling super().__init__(); no C++ method may run on it until then).
      .def_static("_initialized",
                  [](py::handle obj) {
                    auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
                    return py::isinstance<Module>(obj) &&
                           inst->get_value_and_holder().holder_constructed();
                  })
      .def("_module_key", [](const Module& m) { return reinterpret_cast<uintptr_t>(&m); })
      // ---- the registries (own entries, None where registered as None) ----
      .def("_entry_kind",
           [](const Module& m, const std::string& name) -> py::object {
             const char* kind = entry_kind(m, name);
             return kind ? py::object(py::str(kind)) : py::object(py::none());
           })
      .def("_lookup",
           [](const Module& m, const std::string& name) -> py::tuple {
             if (const Tensor* p = own_parameters(m).find(name)) {
               return py::make_tuple("parameter", parameter_object(*p));
             }
             if (const Tensor* b = own_buffers(m).find(name)) {
               return py::make_tuple("buffer", tensor_or_none(*b));
             }
             if (const ModulePtr* c = own_children(m).find(name)) {
               return py::make_tuple("module", *c);
             }
             return py::make_tuple(py::none(), py::none());
           })
      .def("_own_entries",
           [](const Module& m, const std::string& kind) {
             py::list out;
             if (kind == "module") {
               for (const auto& [name, c] : own_children(m)) out.append(py::make_tuple(name, c));
               return out;
             }
             const bool params = kind == "parameter";
             for (const auto& [name, t] : params ? own_parameters(m) : own_buffers(m)) {
               out.append(py::make_tuple(name, params ? parameter_object(t) : tensor_or_none(t)));
             }
             return out;
           })
      .def("_register_parameter",
           [](Module& m, const std::string& name, std::optional<Tensor> t) {
             check_replaceable(m, name);
             Tensor v = t.value_or(Tensor());
             m.register_parameter(name, v, v.defined() && v.requires_grad());
           })
      .def("_register_buffer",
           [](Module& m, const std::string& name, std::optional<Tensor> t, bool persistent) {
             check_replaceable(m, name);
             m.register_buffer(name, t.value_or(Tensor()), persistent);
           })
      .def("_register_module",
           [](Module& m, const std::string& name, py::handle child) {
             check_replaceable(m, name);
             ModulePtr held = module_holder(child);
             if (own_children(m).contains(name)) {
               m.replace_module(name, held);
             } else {
               m.register_module(name, held);
             }
           })
      // ---- traversal and state (PyTorch's order and de-duplication) ----
      .def("_named_parameters",
           [](const Module& m, const std::string& prefix, bool recurse) {
             py::list out;
             for (const auto& [name, t] : m.named_parameters(prefix, recurse)) {
               out.append(py::make_tuple(name, parameter_object(t)));
             }
             return out;
           })
      .def("_named_buffers", [](const Module& m, const std::string& prefix,
                                bool recurse) { return pairs(m.named_buffers(prefix, recurse)); })
      .def("_state_dict", [](const Module& m) { return pairs(m.state_dict()); })
      .def("_load_state_dict", [](Module& m, const py::iterable& items, bool strict) {
        nn::OrderedDict<Tensor> dict;
        for (py::handle item : items) {
          auto kv = item.cast<py::tuple>();
          auto t = as_tensor(kv[1]);
          if (!t) {
            throw py::type_error(
                fmt::format("load_state_dict: the value of \"{}\" is a {}, expected a kiln.Tensor",
                            kv[0].cast<std::string>(), type_name_of(kv[1])));
          }
          dict.insert(kv[0].cast<std::string>(), *t);
        }
        PythonCallSite site;
        auto result = m.load_state_dict(dict, strict);
        return py::make_tuple(result.missing_keys, result.unexpected_keys);
      });
}

// ---- containers ----

// A Python index into a container of `size` modules (negative from the end); IndexError out of
// range, which also ends Python's iteration protocols.
size_t checked_index(size_t size, int64_t index) {
  const auto n = static_cast<int64_t>(size);
  if (index < -n || index >= n) {
    throw py::index_error(fmt::format("index {} is out of range (size {})", index, n));
  }
  return static_cast<size_t>(index < 0 ? index + n : index);
}

void bind_containers(py::module_& nnm) {
  Layer<nn::Sequential>(nnm, "Sequential")
      .def(py::init([](const py::args& args) {
        auto seq = std::make_shared<nn::Sequential>();
        // Sequential(OrderedDict(name=module, ...)) keeps the names, as PyTorch.
        if (args.size() == 1 && py::isinstance<py::dict>(args[0])) {
          for (auto [key, m] : args[0].cast<py::dict>()) {
            seq->register_module(key.cast<std::string>(), module_holder(m));
          }
          return seq;
        }
        for (py::handle m : args) seq->push_back(module_holder(m));
        return seq;
      }))
      .def(
          "forward",
          [](nn::Sequential& s, const Tensor& input) {
            PythonCallSite site;
            return s.forward(input);
          },
          "input"_a)
      .def("__len__", &nn::Sequential::size)
      .def("__getitem__",
           [](const nn::Sequential& s, int64_t i) { return s[checked_index(s.size(), i)]; })
      .def("__getitem__",
           [](const nn::Sequential& s, const py::slice& slice) {
             // The selected modules under their own names, as PyTorch's slicing.
             size_t start = 0, stop = 0, step = 0, length = 0;
             const auto& items = own_children(s).items();
             if (!slice.compute(items.size(), &start, &stop, &step, &length)) {
               throw py::error_already_set();
             }
             nn::OrderedDict<ModulePtr> picked;
             for (size_t i = 0; i < length; ++i) {
               const auto& [key, m] = items[start + i * step];
               picked.insert(key, m);
             }
             return std::make_shared<nn::Sequential>(picked);
           })
      .def("__setitem__",
           [](nn::Sequential& s, int64_t i, py::handle m) {
             auto n = static_cast<int64_t>(s.size());
             if (i < -n || i >= n)
               throw py::index_error(fmt::format("index {} is out of range", i));
             s.replace_module(own_children(s).items()[static_cast<size_t>(i < 0 ? i + n : i)].first,
                              module_holder(m));
           })
      .def("__iter__",
           [](const nn::Sequential& s) { return py::iter(py::cast(s.modules_in_order())); })
      .def(
          "append",
          [](py::object self, py::handle m) {
            self.cast<nn::Sequential&>().push_back(module_holder(m));
            return self;
          },
          "module"_a)
      .def(
          "extend",
          [](py::object self, const py::iterable& ms) {
            for (py::handle m : ms) self.cast<nn::Sequential&>().push_back(module_holder(m));
            return self;
          },
          "sequential"_a);

  Layer<nn::ModuleList>(nnm, "ModuleList")
      .def(py::init([](const std::optional<py::iterable>& modules) {
             auto list = std::make_shared<nn::ModuleList>();
             if (modules) {
               for (py::handle m : *modules) list->push_back(module_holder(m));
             }
             return list;
           }),
           "modules"_a = py::none())
      .def("__len__", &nn::ModuleList::size)
      .def("__getitem__",
           [](const nn::ModuleList& l, int64_t i) { return l[checked_index(l.size(), i)]; })
      .def("__getitem__",
           [](const nn::ModuleList& l, const py::slice& slice) {
             size_t start = 0, stop = 0, step = 0, length = 0;
             auto items = l.items();
             if (!slice.compute(items.size(), &start, &stop, &step, &length)) {
               throw py::error_already_set();
             }
             std::vector<ModulePtr> picked;
             for (size_t i = 0; i < length; ++i) picked.push_back(items[start + i * step]);
             return std::make_shared<nn::ModuleList>(picked);
           })
      .def("__setitem__",
           [](nn::ModuleList& l, int64_t i, py::handle m) {
             auto n = static_cast<int64_t>(l.size());
             if (i < -n || i >= n)
               throw py::index_error(fmt::format("index {} is out of range", i));
             l.replace_module(std::to_string(i < 0 ? i + n : i), module_holder(m));
           })
      .def("__iter__", [](const nn::ModuleList& l) { return py::iter(py::cast(l.items())); })
      .def(
          "append",
          [](py::object self, py::handle m) {
            self.cast<nn::ModuleList&>().push_back(module_holder(m));
            return self;
          },
          "module"_a)
      .def(
          "extend",
          [](py::object self, const py::iterable& ms) {
            for (py::handle m : ms) self.cast<nn::ModuleList&>().push_back(module_holder(m));
            return self;
          },
          "modules"_a)
      .def("__iadd__", [](py::object self, const py::iterable& ms) {
        for (py::handle m : ms) self.cast<nn::ModuleList&>().push_back(module_holder(m));
        return self;
      });

  auto update_dict = [](nn::ModuleDict& d, py::handle modules) {
    py::object items = py::isinstance<py::dict>(modules)
                           ? modules.attr("items")()
                           : py::reinterpret_borrow<py::object>(modules);
    for (py::handle kv : items) {
      auto pair = kv.cast<py::sequence>();
      d.insert(pair[0].cast<std::string>(), module_holder(pair[1]));
    }
  };
  Layer<nn::ModuleDict>(nnm, "ModuleDict")
      .def(py::init([update_dict](py::handle modules) {
             auto d = std::make_shared<nn::ModuleDict>();
             if (!modules.is_none()) update_dict(*d, modules);
             return d;
           }),
           "modules"_a = py::none())
      .def("__len__", &nn::ModuleDict::size)
      .def("__contains__", &nn::ModuleDict::contains)
      .def("__getitem__",
           [](const nn::ModuleDict& d, const std::string& key) {
             if (!d.contains(key)) throw py::key_error(key);
             return d[key];
           })
      .def("__setitem__", [](nn::ModuleDict& d, const std::string& key,
                             py::handle m) { d.insert(key, module_holder(m)); })
      .def("__iter__", [](const nn::ModuleDict& d) { return py::iter(py::cast(d.keys())); })
      .def("keys", &nn::ModuleDict::keys)
      .def("values", &nn::ModuleDict::values)
      .def("items", [](const nn::ModuleDict& d) { return d.items(); })
      .def("update", update_dict, "modules"_a);
}

// ---- layers ----

void bind_linear(py::module_& nnm) {
  Layer<nn::Identity>(nnm, "Identity").def(py::init([](const py::args&, const py::kwargs&) {
    return std::make_shared<nn::Identity>();  // PyTorch's Identity ignores its arguments
  }));

  Layer<nn::Linear> linear(nnm, "Linear");
  linear
      .def(py::init([](int64_t in, int64_t out, bool bias, py::handle device, py::handle dtype) {
             return placed(std::make_shared<nn::Linear>(in, out, bias), device, dtype);
           }),
           "in_features"_a, "out_features"_a, "bias"_a = true, py::kw_only(),
           "device"_a = py::none(), "dtype"_a = py::none())
      .def_readonly("in_features", &nn::Linear::in_features)
      .def_readonly("out_features", &nn::Linear::out_features)
      .def("reset_parameters", &nn::Linear::reset_parameters);
  param_property(linear, "weight", &nn::Linear::weight);
  param_property(linear, "bias", &nn::Linear::bias);
  py::class_<nn::NonDynamicallyQuantizableLinear, nn::Linear,
             std::shared_ptr<nn::NonDynamicallyQuantizableLinear>>(
      nnm, "NonDynamicallyQuantizableLinear")
      .def(py::init<int64_t, int64_t, bool>(), "in_features"_a, "out_features"_a, "bias"_a = true);

  Layer<nn::Bilinear> bilinear(nnm, "Bilinear");
  bilinear
      .def(py::init([](int64_t in1, int64_t in2, int64_t out, bool bias, py::handle device,
                       py::handle dtype) {
             return placed(std::make_shared<nn::Bilinear>(in1, in2, out, bias), device, dtype);
           }),
           "in1_features"_a, "in2_features"_a, "out_features"_a, "bias"_a = true, py::kw_only(),
           "device"_a = py::none(), "dtype"_a = py::none())
      .def(
          "forward",
          [](nn::Bilinear& m, const Tensor& input1, const Tensor& input2) {
            PythonCallSite site;
            return m.forward(input1, input2);
          },
          "input1"_a, "input2"_a)
      .def_readonly("in1_features", &nn::Bilinear::in1_features)
      .def_readonly("in2_features", &nn::Bilinear::in2_features)
      .def_readonly("out_features", &nn::Bilinear::out_features)
      .def("reset_parameters", &nn::Bilinear::reset_parameters);
  param_property(bilinear, "weight", &nn::Bilinear::weight);
  param_property(bilinear, "bias", &nn::Bilinear::bias);
}

void bind_conv(py::module_& nnm) {
  Layer<nn::ConvNdBase> base(nnm, "_ConvNd");
  base.def_readonly("in_channels", &nn::ConvNdBase::in_channels)
      .def_readonly("out_channels", &nn::ConvNdBase::out_channels)
      .def_property_readonly(
          "kernel_size", [](const nn::ConvNdBase& m) { return py::tuple(py::cast(m.kernel_size)); })
      .def_property_readonly("stride",
                             [](const nn::ConvNdBase& m) { return py::tuple(py::cast(m.stride)); })
      .def_property_readonly("padding",
                             [](const nn::ConvNdBase& m) -> py::object {
                               if (!m.padding_string.empty()) return py::str(m.padding_string);
                               return py::tuple(py::cast(m.padding));
                             })
      .def_property_readonly(
          "dilation", [](const nn::ConvNdBase& m) { return py::tuple(py::cast(m.dilation)); })
      .def_property_readonly(
          "output_padding",
          [](const nn::ConvNdBase& m) { return py::tuple(py::cast(m.output_padding)); })
      .def_readonly("transposed", &nn::ConvNdBase::transposed)
      .def_readonly("groups", &nn::ConvNdBase::groups)
      .def_readonly("padding_mode", &nn::ConvNdBase::padding_mode)
      .def("reset_parameters", &nn::ConvNdBase::reset_parameters);
  param_property(base, "weight", &nn::ConvNdBase::weight);
  param_property(base, "bias", &nn::ConvNdBase::bias);

  // Conv1d / Conv2d: padding is a number, a tuple, or the string "same" / "valid".
  auto conv = [&]<class M>(const char* name) {
    py::class_<M, nn::ConvNdBase, std::shared_ptr<M>>(nnm, name).def(
        py::init([name](int64_t in, int64_t out, py::handle kernel_size, py::handle stride,
                        py::handle padding, py::handle dilation, int64_t groups, bool bias,
                        std::string padding_mode, py::handle device, py::handle dtype) {
          auto k = int_list(kernel_size, name), s = int_list(stride, name),
               d = int_list(dilation, name);
          std::shared_ptr<M> m;
          if (py::isinstance<py::str>(padding)) {
            auto p = padding.cast<std::string>();
            if (p != "same" && p != "valid") {
              throw py::value_error(fmt::format(
                  "{}: invalid padding string '{}', should be one of {{'valid', 'same'}}", name,
                  p));
            }
            m = std::make_shared<M>(in, out, k, s, p == "same" ? nn::kSame : nn::kValid, d, groups,
                                    bias, padding_mode);
          } else {
            m = std::make_shared<M>(in, out, k, s, int_list(padding, name), d, groups, bias,
                                    padding_mode);
          }
          return placed(m, device, dtype);
        }),
        "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1, "padding"_a = 0,
        "dilation"_a = 1, "groups"_a = 1, "bias"_a = true, "padding_mode"_a = "zeros",
        py::kw_only(), "device"_a = py::none(), "dtype"_a = py::none());
  };
  conv.operator()<nn::Conv1d>("Conv1d");
  conv.operator()<nn::Conv2d>("Conv2d");

  auto conv_transpose = [&]<class M>(const char* name) {
    py::class_<M, nn::ConvNdBase, std::shared_ptr<M>>(nnm, name)
        .def(py::init([name](int64_t in, int64_t out, py::handle kernel_size, py::handle stride,
                             py::handle padding, py::handle output_padding, int64_t groups,
                             bool bias, py::handle dilation, const std::string& padding_mode,
                             py::handle device, py::handle dtype) {
               KILN_CHECK(padding_mode == "zeros",
                          "{}: only padding_mode='zeros' is supported, got '{}'", name,
                          padding_mode);
               return placed(
                   std::make_shared<M>(in, out, int_list(kernel_size, name), int_list(stride, name),
                                       int_list(padding, name), int_list(output_padding, name),
                                       groups, bias, int_list(dilation, name)),
                   device, dtype);
             }),
             "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1, "padding"_a = 0,
             "output_padding"_a = 0, "groups"_a = 1, "bias"_a = true, "dilation"_a = 1,
             "padding_mode"_a = "zeros", py::kw_only(), "device"_a = py::none(),
             "dtype"_a = py::none())
        .def(
            "forward",
            [name](M& m, const Tensor& input, py::handle output_size) {
              KILN_CHECK(output_size.is_none(), "{}.forward: output_size is not supported", name);
              PythonCallSite site;
              return m.forward(input);
            },
            "input"_a, "output_size"_a = py::none());
  };
  conv_transpose.operator()<nn::ConvTranspose1d>("ConvTranspose1d");
  conv_transpose.operator()<nn::ConvTranspose2d>("ConvTranspose2d");
}

void bind_normalization(py::module_& nnm) {
  Layer<nn::BatchNormBase> base(nnm, "_BatchNorm");
  base.def_readonly("num_features", &nn::BatchNormBase::num_features)
      .def_readwrite("eps", &nn::BatchNormBase::eps)
      .def_readwrite("momentum", &nn::BatchNormBase::momentum)
      .def_readonly("affine", &nn::BatchNormBase::affine)
      .def_readonly("track_running_stats", &nn::BatchNormBase::track_running_stats)
      .def("reset_running_stats", &nn::BatchNormBase::reset_running_stats)
      .def("reset_parameters", &nn::BatchNormBase::reset_parameters);
  param_property(base, "weight", &nn::BatchNormBase::weight);
  param_property(base, "bias", &nn::BatchNormBase::bias);
  buffer_property(base, "running_mean", &nn::BatchNormBase::running_mean);
  buffer_property(base, "running_var", &nn::BatchNormBase::running_var);
  buffer_property(base, "num_batches_tracked", &nn::BatchNormBase::num_batches_tracked);
  auto batch_norm = [&]<class M>(const char* name) {
    py::class_<M, nn::BatchNormBase, std::shared_ptr<M>>(nnm, name).def(
        py::init([](int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                    bool track_running_stats, py::handle device, py::handle dtype) {
          return placed(
              std::make_shared<M>(num_features, eps, momentum, affine, track_running_stats), device,
              dtype);
        }),
        "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1, "affine"_a = true,
        "track_running_stats"_a = true, py::kw_only(), "device"_a = py::none(),
        "dtype"_a = py::none());
  };
  batch_norm.operator()<nn::BatchNorm1d>("BatchNorm1d");
  batch_norm.operator()<nn::BatchNorm2d>("BatchNorm2d");

  Layer<nn::LayerNorm> layer_norm(nnm, "LayerNorm");
  layer_norm
      .def(py::init([](py::handle shape, double eps, bool elementwise_affine, bool bias,
                       py::handle device, py::handle dtype) {
             return placed(std::make_shared<nn::LayerNorm>(int_list(shape, "LayerNorm"), eps,
                                                           elementwise_affine, bias),
                           device, dtype);
           }),
           "normalized_shape"_a, "eps"_a = 1e-5, "elementwise_affine"_a = true, "bias"_a = true,
           py::kw_only(), "device"_a = py::none(), "dtype"_a = py::none())
      .def_property_readonly(
          "normalized_shape",
          [](const nn::LayerNorm& m) { return py::tuple(py::cast(m.normalized_shape)); })
      .def_readwrite("eps", &nn::LayerNorm::eps)
      .def_readonly("elementwise_affine", &nn::LayerNorm::elementwise_affine)
      .def("reset_parameters", &nn::LayerNorm::reset_parameters);
  param_property(layer_norm, "weight", &nn::LayerNorm::weight);
  param_property(layer_norm, "bias", &nn::LayerNorm::bias);

  Layer<nn::GroupNorm> group_norm(nnm, "GroupNorm");
  group_norm
      .def(py::init([](int64_t num_groups, int64_t num_channels, double eps, bool affine,
                       py::handle device, py::handle dtype) {
             return placed(std::make_shared<nn::GroupNorm>(num_groups, num_channels, eps, affine),
                           device, dtype);
           }),
           "num_groups"_a, "num_channels"_a, "eps"_a = 1e-5, "affine"_a = true, py::kw_only(),
           "device"_a = py::none(), "dtype"_a = py::none())
      .def_readonly("num_groups", &nn::GroupNorm::num_groups)
      .def_readonly("num_channels", &nn::GroupNorm::num_channels)
      .def_readwrite("eps", &nn::GroupNorm::eps)
      .def_readonly("affine", &nn::GroupNorm::affine)
      .def("reset_parameters", &nn::GroupNorm::reset_parameters);
  param_property(group_norm, "weight", &nn::GroupNorm::weight);
  param_property(group_norm, "bias", &nn::GroupNorm::bias);

  Layer<nn::RMSNorm> rms_norm(nnm, "RMSNorm");
  rms_norm
      .def(py::init([](py::handle shape, std::optional<double> eps, bool elementwise_affine,
                       py::handle device, py::handle dtype) {
             return placed(
                 std::make_shared<nn::RMSNorm>(int_list(shape, "RMSNorm"), eps, elementwise_affine),
                 device, dtype);
           }),
           "normalized_shape"_a, "eps"_a = py::none(), "elementwise_affine"_a = true, py::kw_only(),
           "device"_a = py::none(), "dtype"_a = py::none())
      .def_property_readonly(
          "normalized_shape",
          [](const nn::RMSNorm& m) { return py::tuple(py::cast(m.normalized_shape)); })
      .def_readwrite("eps", &nn::RMSNorm::eps)
      .def_readonly("elementwise_affine", &nn::RMSNorm::elementwise_affine)
      .def("reset_parameters", &nn::RMSNorm::reset_parameters);
  param_property(rms_norm, "weight", &nn::RMSNorm::weight);
}

void bind_embedding(py::module_& nnm) {
  auto check_unsupported = [](py::handle max_norm, bool scale_grad_by_freq, bool sparse) {
    KILN_CHECK(max_norm.is_none(), "Embedding: max_norm is not supported");
    KILN_CHECK(!scale_grad_by_freq && !sparse,
               "Embedding: scale_grad_by_freq and sparse are not supported");
  };
  Layer<nn::Embedding> embedding(nnm, "Embedding");
  embedding
      .def(py::init([check_unsupported](int64_t num_embeddings, int64_t embedding_dim,
                                        std::optional<int64_t> padding_idx, py::handle max_norm,
                                        double, bool scale_grad_by_freq, bool sparse,
                                        std::optional<Tensor> weight, bool freeze,
                                        py::handle device, py::handle dtype) {
             check_unsupported(max_norm, scale_grad_by_freq, sparse);
             auto m = std::make_shared<nn::Embedding>(num_embeddings, embedding_dim, padding_idx);
             if (weight) {
               KILN_CHECK(IntList(weight->sizes()) == IntList({num_embeddings, embedding_dim}),
                          "Embedding: _weight has shape {}, expected [{}, {}]", weight->sizes(),
                          num_embeddings, embedding_dim);
               m->weight = m->register_parameter("weight", *weight, !freeze);
             }
             return placed(m, device, dtype);
           }),
           "num_embeddings"_a, "embedding_dim"_a, "padding_idx"_a = py::none(),
           "max_norm"_a = py::none(), "norm_type"_a = 2.0, "scale_grad_by_freq"_a = false,
           "sparse"_a = false, "_weight"_a = py::none(), "_freeze"_a = false, py::kw_only(),
           "device"_a = py::none(), "dtype"_a = py::none())
      .def_static(
          "from_pretrained",
          [check_unsupported](const Tensor& embeddings, bool freeze,
                              std::optional<int64_t> padding_idx, py::handle max_norm, double,
                              bool scale_grad_by_freq, bool sparse) {
            check_unsupported(max_norm, scale_grad_by_freq, sparse);
            return nn::Embedding::from_pretrained(embeddings, freeze, padding_idx);
          },
          "embeddings"_a, "freeze"_a = true, "padding_idx"_a = py::none(),
          "max_norm"_a = py::none(), "norm_type"_a = 2.0, "scale_grad_by_freq"_a = false,
          "sparse"_a = false)
      .def_readonly("num_embeddings", &nn::Embedding::num_embeddings)
      .def_readonly("embedding_dim", &nn::Embedding::embedding_dim)
      .def_readonly("padding_idx", &nn::Embedding::padding_idx)
      .def("reset_parameters", &nn::Embedding::reset_parameters);
  param_property(embedding, "weight", &nn::Embedding::weight);
}

void bind_activations(py::module_& nnm) {
  // Activations whose constructor takes only `inplace`.
  auto inplace_only = [&]<class M>(const char* name) {
    Layer<M>(nnm, name)
        .def(py::init<bool>(), "inplace"_a = false)
        .def_readwrite("inplace", &M::inplace);
  };
  inplace_only.operator()<nn::ReLU>("ReLU");
  inplace_only.operator()<nn::ReLU6>("ReLU6");
  inplace_only.operator()<nn::SiLU>("SiLU");
  inplace_only.operator()<nn::Mish>("Mish");
  inplace_only.operator()<nn::Hardswish>("Hardswish");
  inplace_only.operator()<nn::Hardsigmoid>("Hardsigmoid");

  Layer<nn::Hardtanh>(nnm, "Hardtanh")
      .def(py::init<double, double, bool>(), "min_val"_a = -1.0, "max_val"_a = 1.0,
           "inplace"_a = false)
      .def_readwrite("min_val", &nn::Hardtanh::min_val)
      .def_readwrite("max_val", &nn::Hardtanh::max_val)
      .def_readwrite("inplace", &nn::Hardtanh::inplace);
  Layer<nn::LeakyReLU>(nnm, "LeakyReLU")
      .def(py::init<double, bool>(), "negative_slope"_a = 0.01, "inplace"_a = false)
      .def_readwrite("negative_slope", &nn::LeakyReLU::negative_slope)
      .def_readwrite("inplace", &nn::LeakyReLU::inplace);
  Layer<nn::ELU>(nnm, "ELU")
      .def(py::init<double, bool>(), "alpha"_a = 1.0, "inplace"_a = false)
      .def_readwrite("alpha", &nn::ELU::alpha)
      .def_readwrite("inplace", &nn::ELU::inplace);
  Layer<nn::GELU>(nnm, "GELU")
      .def(py::init<std::string>(), "approximate"_a = "none")
      .def_readwrite("approximate", &nn::GELU::approximate);
  Layer<nn::Tanh>(nnm, "Tanh").def(py::init<>());
  Layer<nn::Sigmoid>(nnm, "Sigmoid").def(py::init<>());
  Layer<nn::Softplus>(nnm, "Softplus")
      .def(py::init<double, double>(), "beta"_a = 1.0, "threshold"_a = 20.0)
      .def_readwrite("beta", &nn::Softplus::beta)
      .def_readwrite("threshold", &nn::Softplus::threshold);
  Layer<nn::Softmax>(nnm, "Softmax")
      .def(py::init<std::optional<int64_t>>(), "dim"_a = py::none())
      .def_readwrite("dim", &nn::Softmax::dim);
  Layer<nn::LogSoftmax>(nnm, "LogSoftmax")
      .def(py::init<std::optional<int64_t>>(), "dim"_a = py::none())
      .def_readwrite("dim", &nn::LogSoftmax::dim);
}

void bind_dropout_and_shape(py::module_& nnm) {
  Layer<nn::Dropout>(nnm, "Dropout")
      .def(py::init<double, bool>(), "p"_a = 0.5, "inplace"_a = false)
      .def_readwrite("p", &nn::Dropout::p)
      .def_readwrite("inplace", &nn::Dropout::inplace);
  Layer<nn::Dropout2d>(nnm, "Dropout2d")
      .def(py::init<double, bool>(), "p"_a = 0.5, "inplace"_a = false)
      .def_readwrite("p", &nn::Dropout2d::p)
      .def_readwrite("inplace", &nn::Dropout2d::inplace);
  Layer<nn::Flatten>(nnm, "Flatten")
      .def(py::init<int64_t, int64_t>(), "start_dim"_a = 1, "end_dim"_a = -1)
      .def_readwrite("start_dim", &nn::Flatten::start_dim)
      .def_readwrite("end_dim", &nn::Flatten::end_dim);
  Layer<nn::Unflatten>(nnm, "Unflatten")
      .def(py::init([](int64_t dim, py::handle sizes) {
             return std::make_shared<nn::Unflatten>(dim, int_list(sizes, "Unflatten"));
           }),
           "dim"_a, "unflattened_size"_a)
      .def_readonly("dim", &nn::Unflatten::dim)
      .def_property_readonly("unflattened_size", [](const nn::Unflatten& m) {
        return py::tuple(py::cast(m.unflattened_size));
      });
}

// A pooling size as PyTorch stores it: an int stays an int, a tuple a tuple.
py::object size_object(const std::vector<int64_t>& v) {
  if (v.size() == 1) return py::int_(v[0]);
  return py::tuple(py::cast(v));
}

void bind_pooling(py::module_& nnm) {
  using MaxPoolClass = Layer<nn::MaxPool2d>;
  MaxPoolClass(nnm, "MaxPool2d")
      .def(
          "__init__",
          [](py::detail::value_and_holder& v_h, py::handle kernel_size, py::handle stride,
             py::handle padding, py::handle dilation, bool return_indices, bool ceil_mode) {
            const char* who = "MaxPool2d";
            auto s = stride.is_none() ? std::vector<int64_t>{} : int_list(stride, who);
            construct<MaxPoolClass>(v_h, std::make_shared<nn::MaxPool2d>(
                                             int_list(kernel_size, who), s, int_list(padding, who),
                                             int_list(dilation, who), ceil_mode));
            // forward reads it from the instance, where PyTorch keeps it.
            self_of(v_h).attr("__dict__")["return_indices"] = py::bool_(return_indices);
          },
          py::detail::is_new_style_constructor(), "kernel_size"_a, "stride"_a = py::none(),
          "padding"_a = 0, "dilation"_a = 1, "return_indices"_a = false, "ceil_mode"_a = false)
      .def(
          "forward",
          [](py::object self, const Tensor& input) -> py::object {
            auto& m = self.cast<nn::MaxPool2d&>();
            PythonCallSite site;
            if (py::getattr(self, "return_indices", py::bool_(false)).cast<bool>()) {
              auto [out, indices] = m.forward_with_indices(input);
              return py::make_tuple(out, indices);
            }
            return py::cast(m.forward(input));
          },
          "input"_a)
      .def_property_readonly("kernel_size",
                             [](const nn::MaxPool2d& m) { return size_object(m.kernel_size); })
      .def_property_readonly("stride", [](const nn::MaxPool2d& m) { return size_object(m.stride); })
      .def_property_readonly("padding",
                             [](const nn::MaxPool2d& m) { return size_object(m.padding); })
      .def_property_readonly("dilation",
                             [](const nn::MaxPool2d& m) { return size_object(m.dilation); })
      .def_readonly("ceil_mode", &nn::MaxPool2d::ceil_mode);

  Layer<nn::AvgPool2d>(nnm, "AvgPool2d")
      .def(
          py::init([](py::handle kernel_size, py::handle stride, py::handle padding, bool ceil_mode,
                      bool count_include_pad, std::optional<int64_t> divisor_override) {
            const char* who = "AvgPool2d";
            auto s = stride.is_none() ? std::vector<int64_t>{} : int_list(stride, who);
            return std::make_shared<nn::AvgPool2d>(int_list(kernel_size, who), s,
                                                   int_list(padding, who), ceil_mode,
                                                   count_include_pad, divisor_override);
          }),
          "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0, "ceil_mode"_a = false,
          "count_include_pad"_a = true, "divisor_override"_a = py::none())
      .def_property_readonly("kernel_size",
                             [](const nn::AvgPool2d& m) { return size_object(m.kernel_size); })
      .def_property_readonly("stride", [](const nn::AvgPool2d& m) { return size_object(m.stride); })
      .def_property_readonly("padding",
                             [](const nn::AvgPool2d& m) { return size_object(m.padding); })
      .def_readonly("ceil_mode", &nn::AvgPool2d::ceil_mode)
      .def_readonly("count_include_pad", &nn::AvgPool2d::count_include_pad)
      .def_readonly("divisor_override", &nn::AvgPool2d::divisor_override);

  Layer<nn::AdaptiveAvgPool2d>(nnm, "AdaptiveAvgPool2d")
      .def(py::init([](py::handle output_size) {
             return std::make_shared<nn::AdaptiveAvgPool2d>(
                 int_list(output_size, "AdaptiveAvgPool2d"));
           }),
           "output_size"_a)
      .def_property_readonly(
          "output_size", [](const nn::AdaptiveAvgPool2d& m) { return size_object(m.output_size); });
  Layer<nn::AdaptiveMaxPool2d>(nnm, "AdaptiveMaxPool2d")
      .def(py::init([](py::handle output_size, bool return_indices) {
             KILN_CHECK(!return_indices,
                        "AdaptiveMaxPool2d: return_indices=True is not supported (use "
                        "kiln.nn.functional.adaptive_max_pool2d(x, size, return_indices=True))");
             return std::make_shared<nn::AdaptiveMaxPool2d>(
                 int_list(output_size, "AdaptiveMaxPool2d"));
           }),
           "output_size"_a, "return_indices"_a = false)
      .def_property_readonly(
          "output_size", [](const nn::AdaptiveMaxPool2d& m) { return size_object(m.output_size); });
}

void bind_attention_and_recurrent(py::module_& nnm) {
  Layer<nn::MultiheadAttention> mha(nnm, "MultiheadAttention");
  mha.def(py::init([](int64_t embed_dim, int64_t num_heads, double dropout, bool bias,
                      bool add_bias_kv, bool add_zero_attn, std::optional<int64_t> kdim,
                      std::optional<int64_t> vdim, bool batch_first, py::handle device,
                      py::handle dtype) {
            KILN_CHECK(!add_bias_kv && !add_zero_attn,
                       "MultiheadAttention: add_bias_kv and add_zero_attn are not supported");
            KILN_CHECK(
                kdim.value_or(embed_dim) == embed_dim && vdim.value_or(embed_dim) == embed_dim,
                "MultiheadAttention: kdim and vdim must equal embed_dim ({}), got {} and {}",
                embed_dim, kdim.value_or(embed_dim), vdim.value_or(embed_dim));
            return placed(std::make_shared<nn::MultiheadAttention>(embed_dim, num_heads, dropout,
                                                                   bias, batch_first),
                          device, dtype);
          }),
          "embed_dim"_a, "num_heads"_a, "dropout"_a = 0.0, "bias"_a = true, "add_bias_kv"_a = false,
          "add_zero_attn"_a = false, "kdim"_a = py::none(), "vdim"_a = py::none(),
          "batch_first"_a = false, py::kw_only(), "device"_a = py::none(), "dtype"_a = py::none())
      .def(
          "forward",
          [](nn::MultiheadAttention& m, const Tensor& query, const Tensor& key, const Tensor& value,
             std::optional<Tensor> key_padding_mask, bool need_weights,
             std::optional<Tensor> attn_mask, bool average_attn_weights, bool is_causal) {
            PythonCallSite site;
            auto [out, weights] =
                m.forward(query, key, value, key_padding_mask.value_or(Tensor()), need_weights,
                          attn_mask.value_or(Tensor()), average_attn_weights, is_causal);
            return py::make_tuple(out, tensor_or_none(weights));
          },
          "query"_a, "key"_a, "value"_a, "key_padding_mask"_a = py::none(), "need_weights"_a = true,
          "attn_mask"_a = py::none(), "average_attn_weights"_a = true, "is_causal"_a = false)
      .def_readonly("embed_dim", &nn::MultiheadAttention::embed_dim)
      .def_readonly("num_heads", &nn::MultiheadAttention::num_heads)
      .def_readonly("head_dim", &nn::MultiheadAttention::head_dim)
      .def_readonly("dropout", &nn::MultiheadAttention::dropout)
      .def_readonly("batch_first", &nn::MultiheadAttention::batch_first)
      .def("_reset_parameters", &nn::MultiheadAttention::reset_parameters);
  param_property(mha, "in_proj_weight", &nn::MultiheadAttention::in_proj_weight);
  param_property(mha, "in_proj_bias", &nn::MultiheadAttention::in_proj_bias);

  Layer<nn::TransformerEncoderLayer>(nnm, "TransformerEncoderLayer")
      .def(py::init([](int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout,
                       py::handle activation, double layer_norm_eps, bool batch_first,
                       bool norm_first, bool bias, py::handle device, py::handle dtype) {
             // activation: "relu" / "gelu", or kiln.nn.functional.relu / gelu.
             std::string act = py::isinstance<py::str>(activation)
                                   ? activation.cast<std::string>()
                                   : py::str(py::getattr(activation, "__name__", py::str("?")))
                                         .cast<std::string>();
             KILN_CHECK(act == "relu" || act == "gelu",
                        "TransformerEncoderLayer: activation must be \"relu\" or \"gelu\" (or "
                        "kiln.nn.functional.relu / gelu), got {}",
                        act);
             return placed(std::make_shared<nn::TransformerEncoderLayer>(
                               d_model, nhead, dim_feedforward, dropout, act, layer_norm_eps,
                               batch_first, norm_first, bias),
                           device, dtype);
           }),
           "d_model"_a, "nhead"_a, "dim_feedforward"_a = 2048, "dropout"_a = 0.1,
           "activation"_a = "relu", "layer_norm_eps"_a = 1e-5, "batch_first"_a = false,
           "norm_first"_a = false, "bias"_a = true, py::kw_only(), "device"_a = py::none(),
           "dtype"_a = py::none())
      .def(
          "forward",
          [](nn::TransformerEncoderLayer& m, const Tensor& src, std::optional<Tensor> src_mask,
             std::optional<Tensor> src_key_padding_mask, bool is_causal) {
            PythonCallSite site;
            return m.forward(src, src_mask.value_or(Tensor()),
                             src_key_padding_mask.value_or(Tensor()), is_causal);
          },
          "src"_a, "src_mask"_a = py::none(), "src_key_padding_mask"_a = py::none(),
          "is_causal"_a = false)
      .def_readonly("activation", &nn::TransformerEncoderLayer::activation)
      .def_readonly("norm_first", &nn::TransformerEncoderLayer::norm_first);

  Layer<nn::LSTM>(nnm, "LSTM")
      .def(py::init([](int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias,
                       bool batch_first, double dropout, bool bidirectional, int64_t proj_size,
                       py::handle device, py::handle dtype) {
             KILN_CHECK(proj_size == 0, "LSTM: proj_size is not supported, got {}", proj_size);
             return placed(std::make_shared<nn::LSTM>(input_size, hidden_size, num_layers, bias,
                                                      batch_first, dropout, bidirectional),
                           device, dtype);
           }),
           "input_size"_a, "hidden_size"_a, "num_layers"_a = 1, "bias"_a = true,
           "batch_first"_a = false, "dropout"_a = 0.0, "bidirectional"_a = false, "proj_size"_a = 0,
           py::kw_only(), "device"_a = py::none(), "dtype"_a = py::none())
      .def(
          "forward",
          [](nn::LSTM& m, const Tensor& input, std::optional<std::pair<Tensor, Tensor>> hx) {
            PythonCallSite site;
            auto [out, state] = m.forward(input, hx);
            return py::make_tuple(out, py::make_tuple(std::get<0>(state), std::get<1>(state)));
          },
          "input"_a, "hx"_a = py::none())
      .def_readonly("input_size", &nn::LSTM::input_size)
      .def_readonly("hidden_size", &nn::LSTM::hidden_size)
      .def_readonly("num_layers", &nn::LSTM::num_layers)
      .def_readonly("bias", &nn::LSTM::bias)
      .def_readonly("batch_first", &nn::LSTM::batch_first)
      .def_readonly("dropout", &nn::LSTM::dropout)
      .def_readonly("bidirectional", &nn::LSTM::bidirectional)
      .def_property_readonly("all_weights",
                             [](const nn::LSTM& m) {
                               py::list out;
                               for (const auto& layer : m.all_weights) {
                                 py::list ws;
                                 for (const Tensor& w : layer) ws.append(parameter_object(w));
                                 out.append(ws);
                               }
                               return out;
                             })
      .def("reset_parameters", &nn::LSTM::reset_parameters);
}

// ---- losses ----

void bind_losses(py::module_& nnm) {
  // The shared forward(input, target) of every loss.
  Layer<nn::Loss>(nnm, "_Loss")
      .def(
          "forward",
          [](nn::Loss& m, const Tensor& input, const Tensor& target) {
            PythonCallSite site;
            return m.forward(input, target);
          },
          "input"_a, "target"_a);
  auto loss = [&]<class M>(const char* name) {
    return py::class_<M, nn::Loss, std::shared_ptr<M>>(nnm, name);
  };
  // The reduction string of a loss whose reduction lives at `member`.
  auto reduction_property = []<class M, class C>(C& cls, auto get) {
    cls.def_property_readonly("reduction", [get](const M& m) { return reduction_name(get(m)); });
  };

  auto cross_entropy = loss.operator()<nn::CrossEntropyLoss>("CrossEntropyLoss");
  cross_entropy
      .def(
          py::init([](std::optional<Tensor> weight, py::handle size_average, int64_t ignore_index,
                      py::handle reduce, const std::string& reduction, double label_smoothing) {
            return std::make_shared<nn::CrossEntropyLoss>(CrossEntropyOptions{
                weight.value_or(Tensor()), ignore_index,
                reduction_arg(reduction_string(size_average, reduce, reduction)), label_smoothing});
          }),
          "weight"_a = py::none(), "size_average"_a = py::none(), "ignore_index"_a = -100,
          "reduce"_a = py::none(), "reduction"_a = "mean", "label_smoothing"_a = 0.0)
      .def_property_readonly("ignore_index",
                             [](const nn::CrossEntropyLoss& m) { return m.options.ignore_index; })
      .def_property_readonly("label_smoothing", [](const nn::CrossEntropyLoss& m) {
        return m.options.label_smoothing;
      });
  reduction_property.operator()<nn::CrossEntropyLoss>(
      cross_entropy, [](const nn::CrossEntropyLoss& m) { return m.options.reduction.value; });

  auto nll = loss.operator()<nn::NLLLoss>("NLLLoss");
  nll.def(py::init([](std::optional<Tensor> weight, py::handle size_average, int64_t ignore_index,
                      py::handle reduce, const std::string& reduction) {
            return std::make_shared<nn::NLLLoss>(
                NllLossOptions{weight.value_or(Tensor()), ignore_index,
                               reduction_arg(reduction_string(size_average, reduce, reduction))});
          }),
          "weight"_a = py::none(), "size_average"_a = py::none(), "ignore_index"_a = -100,
          "reduce"_a = py::none(), "reduction"_a = "mean")
      .def_property_readonly("ignore_index",
                             [](const nn::NLLLoss& m) { return m.options.ignore_index; });
  reduction_property.operator()<nn::NLLLoss>(
      nll, [](const nn::NLLLoss& m) { return m.options.reduction.value; });

  auto elementwise = [&]<class M>(const char* name) {
    auto cls = loss.operator()<M>(name);
    cls.def(py::init([](py::handle size_average, py::handle reduce, const std::string& reduction) {
              return std::make_shared<M>(
                  reduction_arg(reduction_string(size_average, reduce, reduction)));
            }),
            "size_average"_a = py::none(), "reduce"_a = py::none(), "reduction"_a = "mean");
    reduction_property.template operator()<M>(cls, [](const M& m) { return m.reduction.value; });
  };
  elementwise.operator()<nn::MSELoss>("MSELoss");
  elementwise.operator()<nn::L1Loss>("L1Loss");

  auto smooth_l1 = loss.operator()<nn::SmoothL1Loss>("SmoothL1Loss");
  smooth_l1
      .def(py::init([](py::handle size_average, py::handle reduce, const std::string& reduction,
                       double beta) {
             return std::make_shared<nn::SmoothL1Loss>(SmoothL1LossOptions{
                 reduction_arg(reduction_string(size_average, reduce, reduction)), beta});
           }),
           "size_average"_a = py::none(), "reduce"_a = py::none(), "reduction"_a = "mean",
           "beta"_a = 1.0)
      .def_property_readonly("beta", [](const nn::SmoothL1Loss& m) { return m.options.beta; });
  reduction_property.operator()<nn::SmoothL1Loss>(
      smooth_l1, [](const nn::SmoothL1Loss& m) { return m.options.reduction.value; });

  auto huber = loss.operator()<nn::HuberLoss>("HuberLoss");
  huber
      .def(py::init([](const std::string& reduction, double delta) {
             return std::make_shared<nn::HuberLoss>(
                 HuberLossOptions{reduction_arg(reduction), delta});
           }),
           "reduction"_a = "mean", "delta"_a = 1.0)
      .def_property_readonly("delta", [](const nn::HuberLoss& m) { return m.options.delta; });
  reduction_property.operator()<nn::HuberLoss>(
      huber, [](const nn::HuberLoss& m) { return m.options.reduction.value; });

  auto bce = loss.operator()<nn::BCELoss>("BCELoss");
  bce.def(py::init([](std::optional<Tensor> weight, py::handle size_average, py::handle reduce,
                      const std::string& reduction) {
            return std::make_shared<nn::BCELoss>(BinaryCrossEntropyOptions{
                weight.value_or(Tensor()),
                reduction_arg(reduction_string(size_average, reduce, reduction))});
          }),
          "weight"_a = py::none(), "size_average"_a = py::none(), "reduce"_a = py::none(),
          "reduction"_a = "mean");
  reduction_property.operator()<nn::BCELoss>(
      bce, [](const nn::BCELoss& m) { return m.options.reduction.value; });

  auto bce_logits = loss.operator()<nn::BCEWithLogitsLoss>("BCEWithLogitsLoss");
  bce_logits.def(
      py::init([](std::optional<Tensor> weight, py::handle size_average, py::handle reduce,
                  const std::string& reduction, std::optional<Tensor> pos_weight) {
        return std::make_shared<nn::BCEWithLogitsLoss>(BinaryCrossEntropyWithLogitsOptions{
            weight.value_or(Tensor()), pos_weight.value_or(Tensor()),
            reduction_arg(reduction_string(size_average, reduce, reduction))});
      }),
      "weight"_a = py::none(), "size_average"_a = py::none(), "reduce"_a = py::none(),
      "reduction"_a = "mean", "pos_weight"_a = py::none());
  reduction_property.operator()<nn::BCEWithLogitsLoss>(
      bce_logits, [](const nn::BCEWithLogitsLoss& m) { return m.options.reduction.value; });

  // reduction="batchmean" (PyTorch's recommended one, which the C++ options lack) is the sum
  // divided by the batch size: the module sums and forward divides.
  using KlClass = py::class_<nn::KLDivLoss, nn::Loss, std::shared_ptr<nn::KLDivLoss>>;
  KlClass(nnm, "KLDivLoss")
      .def(
          "__init__",
          [](py::detail::value_and_holder& v_h, py::handle size_average, py::handle reduce,
             std::string reduction, bool log_target) {
            reduction = reduction_string(size_average, reduce, reduction);
            const bool batchmean = reduction == "batchmean";
            construct<KlClass>(v_h, std::make_shared<nn::KLDivLoss>(KlDivOptions{
                                        reduction_arg(batchmean ? "sum" : reduction), log_target}));
            self_of(v_h).attr("__dict__")["_batchmean"] = py::bool_(batchmean);
          },
          py::detail::is_new_style_constructor(), "size_average"_a = py::none(),
          "reduce"_a = py::none(), "reduction"_a = "mean", "log_target"_a = false)
      .def(
          "forward",
          [](py::object self, const Tensor& input, const Tensor& target) {
            auto& m = self.cast<nn::KLDivLoss&>();
            PythonCallSite site;
            Tensor out = m.forward(input, target);
            if (py::getattr(self, "_batchmean", py::bool_(false)).cast<bool>() && input.dim() > 0) {
              out = out / input.size(0);
            }
            return out;
          },
          "input"_a, "target"_a)
      .def_property_readonly(
          "reduction",
          [](py::object self) {
            if (py::getattr(self, "_batchmean", py::bool_(false)).cast<bool>())
              return std::string("batchmean");
            return reduction_name(self.cast<nn::KLDivLoss&>().options.reduction.value);
          })
      .def_property_readonly("log_target",
                             [](const nn::KLDivLoss& m) { return m.options.log_target; });
}

// ---- kiln.nn.init, clip_grad, checkpoints, the functional pieces the ops lack ----

void bind_init(py::module_& nnm) {
  // Each returns the tensor object it was given, as PyTorch's initializers do.
  py::module_ init = nnm.def_submodule("_init", "kiln::nn::init");
  namespace I = nn::init;
  init.def("calculate_gain", &I::calculate_gain, "nonlinearity"_a, "param"_a = py::none());
  init.def("_calculate_fan_in_and_fan_out", &I::calculate_fan_in_and_fan_out, "tensor"_a);
  init.def(
      "uniform_",
      [](py::object t, double a, double b) {
        I::uniform_(t.cast<Tensor>(), a, b);
        return t;
      },
      "tensor"_a, "a"_a = 0.0, "b"_a = 1.0);
  init.def(
      "normal_",
      [](py::object t, double mean, double std) {
        I::normal_(t.cast<Tensor>(), mean, std);
        return t;
      },
      "tensor"_a, "mean"_a = 0.0, "std"_a = 1.0);
  init.def(
      "trunc_normal_",
      [](py::object t, double mean, double std, double a, double b) {
        I::trunc_normal_(t.cast<Tensor>(), mean, std, a, b);
        return t;
      },
      "tensor"_a, "mean"_a = 0.0, "std"_a = 1.0, "a"_a = -2.0, "b"_a = 2.0);
  init.def(
      "constant_",
      [](py::object t, double value) {
        I::constant_(t.cast<Tensor>(), value);
        return t;
      },
      "tensor"_a, "val"_a);
  init.def(
      "ones_",
      [](py::object t) {
        I::ones_(t.cast<Tensor>());
        return t;
      },
      "tensor"_a);
  init.def(
      "zeros_",
      [](py::object t) {
        I::zeros_(t.cast<Tensor>());
        return t;
      },
      "tensor"_a);
  init.def(
      "eye_",
      [](py::object t) {
        I::eye_(t.cast<Tensor>());
        return t;
      },
      "tensor"_a);
  init.def(
      "xavier_uniform_",
      [](py::object t, double gain) {
        I::xavier_uniform_(t.cast<Tensor>(), gain);
        return t;
      },
      "tensor"_a, "gain"_a = 1.0);
  init.def(
      "xavier_normal_",
      [](py::object t, double gain) {
        I::xavier_normal_(t.cast<Tensor>(), gain);
        return t;
      },
      "tensor"_a, "gain"_a = 1.0);
  init.def(
      "kaiming_uniform_",
      [](py::object t, double a, const std::string& mode, const std::string& nonlinearity) {
        I::kaiming_uniform_(t.cast<Tensor>(), a, mode, nonlinearity);
        return t;
      },
      "tensor"_a, "a"_a = 0.0, "mode"_a = "fan_in", "nonlinearity"_a = "leaky_relu");
  init.def(
      "kaiming_normal_",
      [](py::object t, double a, const std::string& mode, const std::string& nonlinearity) {
        I::kaiming_normal_(t.cast<Tensor>(), a, mode, nonlinearity);
        return t;
      },
      "tensor"_a, "a"_a = 0.0, "mode"_a = "fan_in", "nonlinearity"_a = "leaky_relu");
  init.def(
      "orthogonal_",
      [](py::object t, double gain) {
        I::orthogonal_(t.cast<Tensor>(), gain);
        return t;
      },
      "tensor"_a, "gain"_a = 1.0);
}

void bind_utils_and_checkpoints(py::module_& nnm) {
  nnm.def(
      "_clip_grad_norm_",
      [](const std::vector<Tensor>& params, double max_norm, double norm_type,
         bool error_if_nonfinite) {
        PythonCallSite site;
        return optim::clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite);
      },
      "parameters"_a, "max_norm"_a, "norm_type"_a, "error_if_nonfinite"_a);
  nnm.def(
      "_clip_grad_value_",
      [](const std::vector<Tensor>& params, double clip_value) {
        PythonCallSite site;
        optim::clip_grad_value_(params, clip_value);
      },
      "parameters"_a, "clip_value"_a);

  // safetensors: a module's state dict (nn::load_safetensors / save_safetensors) or a
  // name -> tensor dict (kiln::safetensors::load / save).
  nnm.def(
      "_load_safetensors_into",
      [](Module& m, const std::string& path, bool strict) {
        auto result = nn::load_safetensors(m, path, strict);
        return py::make_tuple(result.missing_keys, result.unexpected_keys);
      },
      "module"_a, "path"_a, "strict"_a);
  nnm.def("_save_module_safetensors", &nn::save_safetensors, "module"_a, "path"_a, "metadata"_a);
  nnm.def("_safetensors_load", &safetensors::load, "path"_a);
  nnm.def("_safetensors_load_metadata", &safetensors::load_metadata, "path"_a);
  nnm.def("_safetensors_save", &safetensors::save, "path"_a, "tensors"_a, "metadata"_a);

  nnm.def("_tensor_key", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); });
  // F.bilinear and F.interpolate, which are C++ functions rather than registered ops.
  nnm.def(
      "_bilinear",
      [](const Tensor& input1, const Tensor& input2, const Tensor& weight,
         std::optional<Tensor> bias) {
        PythonCallSite site;
        return nn::functional::bilinear(input1, input2, weight, bias.value_or(Tensor()));
      },
      "input1"_a, "input2"_a, "weight"_a, "bias"_a = py::none());
  nnm.def(
      "_interpolate",
      [](const Tensor& input, std::optional<std::vector<int64_t>> size,
         std::optional<std::vector<double>> scale_factor, const std::string& mode,
         std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor) {
        PythonCallSite site;
        return kiln::interpolate(input, size, scale_factor, mode, align_corners,
                                 recompute_scale_factor);
      },
      "input"_a, "size"_a, "scale_factor"_a, "mode"_a, "align_corners"_a,
      "recompute_scale_factor"_a);
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nnm = m.def_submodule("nn", "kiln::nn: Module and the C++ layers");
  bind_module(nnm);
  bind_containers(nnm);
  bind_linear(nnm);
  bind_conv(nnm);
  bind_normalization(nnm);
  bind_embedding(nnm);
  bind_activations(nnm);
  bind_dropout_and_shape(nnm);
  bind_pooling(nnm);
  bind_attention_and_recurrent(nnm);
  bind_losses(nnm);
  bind_init(nnm);
  bind_utils_and_checkpoints(nnm);
}

}  // namespace kiln::python
