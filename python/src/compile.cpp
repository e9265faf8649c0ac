// kiln.compile for Python functions and modules: the C++ capture core (CompiledFunctionCore) with
// Python callables on both ends. python/kiln/_compile.py flattens Python arguments and results
// into leaves (tensors, numbers, strings); this file runs the core on them, wraps Python
// backends as kiln backends, and exposes the graphs a Python backend receives.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>

#include "bindings.h"

namespace kiln::python {
namespace {

using capture::Leaves;

// A Python object kept by C++ state that may outlive the interpreter (the backend registry, cached
// graphs): released under the GIL while Python lives, dropped without touching it afterwards.
struct HeldObject {
  py::object obj;
  HeldObject() = default;
  HeldObject(const HeldObject&) = delete;
  HeldObject& operator=(const HeldObject&) = delete;
  ~HeldObject() {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      obj = py::object();
    } else {
      (void)obj.release();
    }
  }
};

std::shared_ptr<HeldObject> keep(py::object obj) {
  auto held = std::make_shared<HeldObject>();
  held->obj = std::move(obj);
  return held;
}

ops::IValue leaf_of(py::handle h) {
  if (auto t = as_tensor(h)) return *t;
  if (PyBool_Check(h.ptr())) return h.ptr() == Py_True;
  if (PyLong_Check(h.ptr())) return h.cast<int64_t>();
  if (PyFloat_Check(h.ptr())) return h.cast<double>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (h.is_none()) return ops::IValue();
  throw py::type_error(
      "kiln.compile: internal error: a leaf must be a Tensor, bool, int, float, "
      "str or None, got " +
      type_name_of(h));
}

py::object object_of(const ops::IValue& v) {
  if (v.is_none()) return py::none();
  if (v.is_tensor()) return py::cast(v.to_tensor());
  if (v.is_bool()) return py::bool_(v.to_bool());
  if (v.is_int()) return py::int_(v.to_int());
  if (v.is_double()) return py::float_(v.to_double());
  if (v.is_string()) return py::str(v.to_string());
  if (v.is_scalar()) return scalar_object(v.to_scalar());
  throw py::type_error("kiln.compile: internal error: unexpected leaf " + v.repr());
}

Leaves leaves_of(const py::sequence& seq) {
  Leaves out;
  out.reserve(py::len(seq));
  for (py::handle h : seq) out.push_back(leaf_of(h));
  return out;
}

py::list list_of(const Leaves& leaves) {
  py::list out(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) out[i] = object_of(leaves[i]);
  return out;
}

// Records Python lines on graph nodes while the function traces; restores the previous state.
class RecordingSites {
 public:
  RecordingSites() : previous_(recording_python_sites()) { set_recording_python_sites(true); }
  ~RecordingSites() { set_recording_python_sites(previous_); }
  RecordingSites(const RecordingSites&) = delete;
  RecordingSites& operator=(const RecordingSites&) = delete;

 private:
  bool previous_;
};

capture::CompiledFunctionCore::RunUser runner(py::function run) {
  return [run](const Leaves& args) -> Leaves {
    RecordingSites sites;
    py::object result = run(list_of(args));
    return leaves_of(result);
  };
}

// The graph a Python backend receives (PyTorch's GraphModule role): printable, and callable with
// the eager interpreter, so that a backend may return it (or wrap it) as the compiled function.
class PyGraphModule {
 public:
  PyGraphModule(const graph::Graph& g, std::span<const Tensor> examples, BackendContext context)
      : graph_(g.clone()), context_(std::move(context)) {
    for (const Tensor& t : examples) example_meta_.push_back(graph::ValueMeta::of(t));
  }
  std::string code() const { return graph_.str(); }
  const std::string& name() const { return context_.graph_name; }
  py::list nodes() const {
    py::list out;
    for (const auto& n : graph_.nodes()) {
      py::dict d;
      d["name"] = n->name;
      d["op"] = n->kind == graph::NodeKind::Op ? py::str(n->op->full_name()) : py::str("input");
      d["target"] = n->kind == graph::NodeKind::Op ? n->op->name() : n->label;
      if (n->loc.known()) d["source"] = n->loc.str();
      out.append(d);
    }
    return out;
  }
  size_t num_ops() const { return graph_.num_ops(); }
  py::object call(const py::args& args) {
    std::vector<Tensor> inputs;
    for (py::handle a : args) {
      auto t = as_tensor(a);
      if (!t) throw py::type_error("GraphModule: expected tensors as arguments");
      inputs.push_back(*t);
    }
    if (!run_) {
      run_ = lookup_backend("eager")(graph_, inputs, context_);
    }
    return py::cast(run_(inputs));
  }

 private:
  graph::Graph graph_;
  BackendContext context_;
  std::vector<graph::ValueMeta> example_meta_;
  CompiledGraph run_;
};

Backend python_backend(py::function fn) {
  auto held = keep(std::move(fn));
  return [held](const graph::Graph& g, std::span<const Tensor> examples,
                const BackendContext& context) -> CompiledGraph {
    py::gil_scoped_acquire gil;
    auto gm = std::make_shared<PyGraphModule>(g, examples, context);
    py::list example_list;
    for (const Tensor& t : examples) example_list.append(py::cast(t));
    py::object compiled = held->obj(py::cast(gm), example_list);
    if (!PyCallable_Check(compiled.ptr())) {
      throw py::type_error("a Python backend must return a callable (for example gm itself)");
    }
    auto compiled_held = keep(std::move(compiled));
    return [compiled_held, gm](std::span<const Tensor> inputs) -> std::vector<Tensor> {
      py::gil_scoped_acquire gil;
      py::tuple args(inputs.size());
      for (size_t i = 0; i < inputs.size(); ++i) args[i] = py::cast(inputs[i]);
      py::object r = compiled_held->obj(*args);
      if (auto t = as_tensor(r)) return {*t};
      std::vector<Tensor> outs;
      for (py::handle h : r) {
        auto t = as_tensor(h);
        if (!t) throw py::type_error("a compiled graph must return tensors");
        outs.push_back(*t);
      }
      return outs;
    };
  };
}

CompileOptions options_of(const std::string& mode, bool fullgraph, py::handle dynamic,
                          py::handle backend, const py::dict& options, bool disable) {
  CompileOptions o;
  o.mode = mode;
  o.fullgraph = fullgraph;
  if (!dynamic.is_none()) o.dynamic = dynamic.cast<bool>();
  if (py::isinstance<py::str>(backend)) {
    o.backend = backend.cast<std::string>();
  } else if (PyCallable_Check(backend.ptr())) {
    std::string name = py::hasattr(backend, "__name__")
                           ? py::str(backend.attr("__name__")).cast<std::string>()
                           : std::string("python_backend");
    o.backend = NamedBackend{name, python_backend(py::reinterpret_borrow<py::function>(backend)),
                             BackendTraits{}};
  } else {
    throw py::type_error("kiln.compile: backend must be a name or a callable");
  }
  for (auto item : options) {
    py::handle v = item.second;
    std::string value = PyBool_Check(v.ptr()) ? (v.ptr() == Py_True ? "true" : "false")
                                              : py::str(v).cast<std::string>();
    o.options[py::str(item.first).cast<std::string>()] = value;
  }
  o.disable = disable;
  return o;
}

}  // namespace

void bind_compile(py::module_& m) {
  m.def("_set_package_dir", &set_package_dir);

  py::class_<capture::CompiledFunctionCore, std::shared_ptr<capture::CompiledFunctionCore>>(
      m, "_CompiledFunctionCore")
      .def(py::init([](const std::string& name, py::handle module, const std::string& mode,
                       bool fullgraph, py::handle dynamic, py::handle backend,
                       const py::dict& options, bool disable) {
             std::shared_ptr<nn::Module> mod;
             if (!module.is_none()) mod = module_holder(module);
             return std::make_shared<capture::CompiledFunctionCore>(
                 options_of(mode, fullgraph, dynamic, backend, options, disable), name, mod);
           }),
           py::arg("name"), py::arg("module"), py::arg("mode"), py::arg("fullgraph"),
           py::arg("dynamic"), py::arg("backend"), py::arg("options"), py::arg("disable"))
      // call(leaves, run): run(leaves) -> leaves calls the user's function while tracing.
      .def("call",
           [](capture::CompiledFunctionCore& core, const py::list& leaves, py::function run) {
             return list_of(core.call(leaves_of(leaves), runner(std::move(run))));
           })
      .def("explain",
           [](capture::CompiledFunctionCore& core, const py::list& leaves, py::function run) {
             return core.explain(leaves_of(leaves), runner(std::move(run)));
           })
      .def_property_readonly("name", &capture::CompiledFunctionCore::name)
      .def_property_readonly("cache_entries", &capture::CompiledFunctionCore::cache_entries);

  py::class_<PyGraphModule, std::shared_ptr<PyGraphModule>>(m, "GraphModule")
      .def_property_readonly("code", &PyGraphModule::code)
      .def_property_readonly("name", &PyGraphModule::name)
      .def_property_readonly("nodes", &PyGraphModule::nodes)
      .def_property_readonly("num_ops", &PyGraphModule::num_ops)
      .def("print_readable", [](const PyGraphModule& gm) { py::print(gm.code()); })
      .def("__str__", &PyGraphModule::code)
      .def("__call__", &PyGraphModule::call)
      .def("forward", &PyGraphModule::call);

  m.def("_register_backend", [](const std::string& name, py::function fn) {
    register_backend(name, python_backend(std::move(fn)));
  });
  m.def("list_backends", &list_backends);
  m.def("reset", &reset);
  m.def("cache_size_limit", &cache_size_limit);
  m.def("set_cache_size_limit", &set_cache_size_limit);
  m.def("graph_break", [] {
    std::optional<SourceLocation> site = python_call_site();
    graph_break(site.value_or(SourceLocation()));
  });
  m.def("mark_dynamic", &mark_dynamic, py::arg("t"), py::arg("dim"), py::arg("min") = py::none(),
        py::arg("max") = py::none());
  m.def("mark_static", &mark_static, py::arg("t"), py::arg("dim"));
  m.def("set_warning_handler", [](py::object handler) {
    if (handler.is_none()) {
      set_warning_handler({});
      return;
    }
    auto held = keep(std::move(handler));
    set_warning_handler([held](std::string_view msg) {
      py::gil_scoped_acquire gil;
      held->obj(std::string(msg));
    });
  });
}

}  // namespace kiln::python
