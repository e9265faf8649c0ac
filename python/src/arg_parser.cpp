#include "arg_parser.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <map>

namespace kiln::python {
namespace {

using ops::ArgType;
using ops::Argument;
using ops::IValue;
using ops::Schema;

bool is_int(py::handle h) { return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()); }
bool is_int_like(py::handle h) {
  if (is_int(h)) return true;
  // numpy integers: exact integers through __index__, never floats or tensors.
  return !PyBool_Check(h.ptr()) && !PyFloat_Check(h.ptr()) && !as_tensor(h) &&
         PyObject_HasAttrString(h.ptr(), "__index__") && !py::isinstance<py::sequence>(h);
}
int64_t to_int(py::handle h) {
  return py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr())).cast<int64_t>();
}
// A size argument: a kiln.SymInt as it is, any other integer as a plain SymInt.
SymInt to_sym_int(py::handle h) {
  if (auto s = as_symint(h)) return *s;
  return SymInt(to_int(h));
}
// An int[] / SymInt[] argument's value: symbolic elements kept only where the schema takes
// symbolic sizes (elsewhere they are specialized, under a guard).
IValue int_list(const std::vector<SymInt>& sizes, ArgType type) {
  bool symbolic = false;
  for (const SymInt& s : sizes) symbolic |= s.is_symbolic();
  if (symbolic && type == ArgType::SymIntList) return sizes;
  std::vector<int64_t> plain;
  plain.reserve(sizes.size());
  for (const SymInt& s : sizes) plain.push_back(specialize(s));
  return plain;
}
bool is_sequence(py::handle h) {
  return py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h);
}

// Converts one Python value for one schema argument; false when it does not fit.
bool convert(py::handle h, const Argument& a, bool numbers_as_tensors, IValue& out) {
  if (h.is_none()) {
    if (!a.optional) return false;
    out = IValue();
    return true;
  }
  switch (a.type) {
    case ArgType::Tensor: {
      if (auto t = as_tensor(h)) {
        out = *t;
        return true;
      }
      if (numbers_as_tensors) {
        if (auto s = as_scalar(h)) {
          out = wrapped_scalar(*s);
          return true;
        }
      }
      return false;
    }
    case ArgType::TensorList: {
      if (!is_sequence(h)) return false;
      std::vector<Tensor> list;
      for (py::handle e : h) {
        if (e.is_none() && a.optional_elements) {
          list.emplace_back();
          continue;
        }
        auto t = as_tensor(e);
        if (!t) return false;
        list.push_back(*t);
      }
      out = std::move(list);
      return true;
    }
    case ArgType::Int:
      if (!is_int_like(h)) return false;
      out = to_int(h);  // a SymInt is specialized (its __index__)
      return true;
    case ArgType::SymInt:
      if (!is_int_like(h)) return false;
      out = to_sym_int(h);
      return true;
    case ArgType::IntList:
    case ArgType::SymIntList: {
      if (is_int_like(h)) {
        if (a.list_size == 0) return false;
        out = int_list({to_sym_int(h)}, a.type);
        return true;
      }
      if (!is_sequence(h)) return false;
      std::vector<SymInt> list;
      for (py::handle e : h) {
        if (!is_int_like(e)) return false;
        list.push_back(to_sym_int(e));
      }
      out = int_list(list, a.type);
      return true;
    }
    case ArgType::Float:
      if (PyBool_Check(h.ptr()) || as_tensor(h)) return false;
      if (PyFloat_Check(h.ptr()) || is_int_like(h)) {
        out = py::reinterpret_steal<py::object>(PyNumber_Float(h.ptr())).cast<double>();
        return true;
      }
      if (auto s = as_scalar(h); s && !s->is_bool()) {
        out = s->to<double>();
        return true;
      }
      return false;
    case ArgType::FloatList: {
      if (!is_sequence(h)) return false;
      std::vector<double> list;
      for (py::handle e : h) {
        auto s = as_scalar(e);
        if (!s || s->is_bool()) return false;
        list.push_back(s->to<double>());
      }
      out = std::move(list);
      return true;
    }
    case ArgType::Bool:
      if (!PyBool_Check(h.ptr())) return false;
      out = h.ptr() == Py_True;
      return true;
    case ArgType::BoolList: {
      if (!is_sequence(h)) return false;
      std::vector<int64_t> list;
      for (py::handle e : h) {
        if (!PyBool_Check(e.ptr())) return false;
        list.push_back(e.ptr() == Py_True ? 1 : 0);
      }
      out = std::move(list);
      return true;
    }
    case ArgType::Scalar: {
      auto s = as_scalar(h);
      if (!s) return false;
      out = *s;
      return true;
    }
    case ArgType::String:
      if (!py::isinstance<py::str>(h)) return false;
      out = h.cast<std::string>();
      return true;
    case ArgType::DType: {
      auto d = as_dtype(h);
      if (!d) return false;
      out = *d;
      return true;
    }
    case ArgType::Device: {
      if (!py::isinstance<Device>(h) && !py::isinstance<py::str>(h)) return false;
      out = *as_device(h);
      return true;
    }
  }
  return false;
}

bool is_int_list(const Argument& a) {
  return a.type == ArgType::IntList || a.type == ArgType::SymIntList;
}

// Binds Python arguments to one schema; false (and nothing called) when they do not fit.
bool bind_schema(const Schema& schema, const std::vector<py::handle>& positional,
                 const py::kwargs& kwargs, bool numbers_as_tensors, ops::Stack& stack) {
  const auto& params = schema.arguments;
  stack.assign(params.size(), IValue());
  std::vector<bool> filled(params.size(), false);
  size_t next = 0;
  for (size_t i = 0; i < params.size() && next < positional.size(); ++i) {
    const Argument& a = params[i];
    if (a.kwarg_only) break;
    // Sizes as varargs (x.view(2, 3), kiln.zeros(2, 3)): an int list absorbs the remaining ints.
    // A single int does too (x.view(-1)) unless the list takes one int as N copies (int[1]).
    bool last_positional = i + 1 == params.size() || params[i + 1].kwarg_only;
    if (is_int_list(a) && is_int_like(positional[next]) && last_positional &&
        (positional.size() - next > 1 || a.list_size == 0)) {
      bool all_ints = true;
      for (size_t j = next; j < positional.size(); ++j) all_ints &= is_int_like(positional[j]);
      if (all_ints) {
        std::vector<SymInt> sizes;
        for (size_t j = next; j < positional.size(); ++j) {
          sizes.push_back(to_sym_int(positional[j]));
        }
        stack[i] = int_list(sizes, a.type);
        filled[i] = true;
        next = positional.size();
        break;
      }
    }
    if (!convert(positional[next], a, numbers_as_tensors, stack[i])) return false;
    filled[i] = true;
    ++next;
  }
  if (next < positional.size()) return false;
  for (auto item : kwargs) {
    auto key = item.first.cast<std::string>();
    if (key == "out") continue;
    int idx = schema.find(key);
    if (idx < 0 || filled[static_cast<size_t>(idx)]) return false;
    auto i = static_cast<size_t>(idx);
    if (!convert(item.second, params[i], numbers_as_tensors, stack[i])) return false;
    filled[i] = true;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (filled[i]) continue;
    if (params[i].default_value) {
      stack[i] = *params[i].default_value;
    } else if (!params[i].optional) {
      return false;
    }
  }
  return true;
}

std::string python_type_name(py::handle h) {
  if (as_tensor(h)) return "Tensor";
  return type_name_of(h);
}

py::object named_tuple_type(const Schema& schema) {
  // One namedtuple type per schema with named returns, kept as attributes of kiln._C.return_types
  // (PyTorch's torch.return_types.max, ...).
  py::module_ types = py::module_::import("kiln._C").attr("return_types");
  std::string key = schema.full_name();
  for (char& c : key) c = c == '.' ? '_' : c;
  if (!py::hasattr(types, key.c_str())) {
    py::list fields;
    for (const auto& r : schema.returns) fields.append(r.name);
    types.attr(key.c_str()) =
        py::module_::import("collections").attr("namedtuple")(schema.name, fields);
  }
  return types.attr(key.c_str());
}

py::object wrap_outputs(const ops::OpDef& op, std::vector<Tensor> outputs, py::handle aliased) {
  const Schema& s = op.schema;
  if (s.returns.size() == 1 && s.returns[0].type == ArgType::TensorList) {
    return py::cast(std::move(outputs));
  }
  if (s.returns.size() == 1) {
    if (aliased) return py::reinterpret_borrow<py::object>(aliased);
    return py::cast(std::move(outputs.at(0)));
  }
  py::tuple values(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) values[i] = py::cast(std::move(outputs[i]));
  bool named = !s.returns.empty() && !s.returns[0].name.empty();
  if (!named) return values;
  return named_tuple_type(s)(*values);
}

}  // namespace

OverloadSet::OverloadSet(std::string python_name, std::vector<const ops::OpDef*> overloads)
    : name_(std::move(python_name)), overloads_(std::move(overloads)) {}

bool OverloadSet::is_method() const {
  for (const auto* op : overloads_) {
    const auto& args = op->schema.arguments;
    if (!args.empty() && args[0].name == "self" && args[0].type == ArgType::Tensor) return true;
  }
  return false;
}

py::object OverloadSet::call(py::handle self, const py::args& args,
                             const py::kwargs& kwargs) const {
  std::vector<py::handle> positional;
  positional.reserve(args.size() + 1);
  if (self) positional.push_back(self);
  for (py::handle a : args) positional.push_back(a);
  py::object out_obj;
  if (kwargs.contains("out")) out_obj = kwargs["out"];
  bool want_out = out_obj && !out_obj.is_none();

  ops::Stack stack;
  for (bool numbers_as_tensors : {false, true}) {
    for (const ops::OpDef* op : overloads_) {
      if (self && (op->schema.arguments.empty() || op->schema.arguments[0].name != "self"))
        continue;
      if (!bind_schema(op->schema, positional, kwargs, numbers_as_tensors, stack)) continue;
      const ops::OpDef* target = op;
      py::handle aliased;
      if (want_out) {
        if (op->out == nullptr) continue;
        target = op->out;
        auto out_tensor = as_tensor(out_obj);
        if (!out_tensor) {
          throw py::type_error(fmt::format("{}(): out= expects a Tensor", name_));
        }
        stack.emplace_back(*out_tensor);
        aliased = out_obj;
      } else if (!op->schema.arguments.empty() && op->schema.arguments[0].is_mutable &&
                 !positional.empty() && op->schema.returns.size() == 1) {
        aliased = positional[0];  // in place: the result is self, the same Python object
      }
      PythonCallSite site;
      std::vector<Tensor> outputs = ops::call(*target, std::move(stack));
      return wrap_outputs(*target, std::move(outputs), aliased);
    }
  }
  std::string got;
  for (size_t i = self ? 1 : 0; i < positional.size(); ++i) {
    if (!got.empty()) got += ", ";
    got += python_type_name(positional[i]);
  }
  for (auto item : kwargs) {
    if (!got.empty()) got += ", ";
    got += fmt::format("{}={}", item.first.cast<std::string>(), python_type_name(item.second));
  }
  std::string expected;
  for (const auto* op : overloads_) expected += "\n * " + op->schema.str();
  throw py::type_error(fmt::format(
      "{}() received an invalid combination of arguments - got ({}), but expected one of:{}", name_,
      got, expected));
}

std::vector<OverloadSet> overload_sets() {
  std::map<std::string, std::vector<const ops::OpDef*>> groups;
  for (const ops::OpDef* op : ops::OpRegistry::instance().all()) {
    if (op->variant == ops::Variant::Out) continue;
    groups[op->schema.name].push_back(op);
  }
  std::vector<OverloadSet> sets;
  for (auto& [name, defs] : groups) {
    // The overload without a name first (PyTorch lists the default overload first).
    std::stable_sort(defs.begin(), defs.end(), [](const ops::OpDef* a, const ops::OpDef* b) {
      return a->schema.overload.empty() && !b->schema.overload.empty();
    });
    sets.emplace_back(name, std::move(defs));
  }
  return sets;
}

}  // namespace kiln::python
