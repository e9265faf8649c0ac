// kiln.Tensor: properties, autograd, conversions and Python's operators. Ops with a `self`
// argument become methods from the registry (ops.cpp); indexing lives in python/kiln/_indexing.py.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"

namespace kiln::python {
namespace {

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// `a op b` for a tensor `a` and a tensor or Python number `b`; NotImplemented otherwise, so that
// Python tries the other operand's reflected operator.
template <typename F>
auto binary(F fn) {
  return [fn](const Tensor& a, py::handle b) -> py::object {
    PythonCallSite site;
    if (auto t = as_tensor(b)) return py::cast(fn(a, *t));
    if (auto s = as_scalar(b)) return py::cast(fn(a, *s));
    return not_implemented();
  };
}
// `b op a` for a Python number `b`.
template <typename F>
auto reflected(F fn) {
  return [fn](const Tensor& a, py::handle b) -> py::object {
    PythonCallSite site;
    if (auto t = as_tensor(b)) return py::cast(fn(*t, a));
    if (auto s = as_scalar(b)) return py::cast(fn(wrapped_scalar(*s), a));
    return not_implemented();
  };
}
// `a op= b`: in place on a's tensor; returns a (the same Python object).
template <typename F>
auto inplace(F fn) {
  return [fn](py::object self, py::handle b) -> py::object {
    Tensor a = self.cast<Tensor>();
    PythonCallSite site;
    if (auto t = as_tensor(b)) {
      fn(a, *t);
    } else if (auto s = as_scalar(b)) {
      fn(a, wrapped_scalar(*s));
    } else {
      return not_implemented();
    }
    return self;
  };
}

Tensor to_tensor_arg(const Tensor& t) { return t; }
Tensor to_tensor_arg(const Scalar& s) { return wrapped_scalar(s); }

// A tensor's sizes as a tuple of ints, with a kiln.SymInt for each symbolic one.
py::tuple sizes_object(const Tensor& t) {
  SymIntList sizes = t.sym_sizes();
  py::tuple out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) out[i] = symint_object(sizes[i]);
  return out;
}

const ops::OpDef& op(const char* name) { return ops::OpRegistry::instance().get(name); }
Tensor call1(const char* name, ops::Stack args) { return ops::call1(op(name), std::move(args)); }

// Nested Python sequences of numbers: their values in row-major order and their shape.
void flatten_data(py::handle obj, int64_t depth, std::vector<int64_t>& shape,
                  std::vector<Scalar>& values) {
  if (auto s = as_scalar(obj)) {
    KILN_CHECK(depth == static_cast<int64_t>(shape.size()),
               "tensor: expected a sequence at dim {}, got a number", depth);
    values.push_back(*s);
    return;
  }
  if (auto t = as_tensor(obj)) {
    KILN_CHECK(t->numel() == 1 || t->dim() == 0,
               "tensor: only one-element tensors can be nested in a list, got sizes {}",
               t->sizes());
    flatten_data(scalar_object(t->item()), depth, shape, values);
    return;
  }
  if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj)) {
    throw py::type_error("tensor(): expected numbers or nested sequences of numbers, got " +
                         type_name_of(obj));
  }
  auto seq = py::reinterpret_borrow<py::sequence>(obj);
  auto n = static_cast<int64_t>(py::len(seq));
  if (depth == static_cast<int64_t>(shape.size())) {
    KILN_CHECK(values.empty(), "tensor: expected a number at dim {}, got a sequence", depth);
    shape.push_back(n);
  } else {
    KILN_CHECK(shape[static_cast<size_t>(depth)] == n,
               "tensor: expected sequence of length {} at dim {}, got {}",
               shape[static_cast<size_t>(depth)], depth, n);
  }
  for (py::handle item : seq) flatten_data(item, depth + 1, shape, values);
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype) {
  if (auto t = as_tensor(data)) return t->detach().clone().to(dtype.value_or(t->dtype()));
  if (py::hasattr(data, "__array_interface__") || py::hasattr(data, "__array__")) {
    // numpy arrays (and array-likes): a copy of the buffer, in the array's dtype.
    Tensor shared =
        py::module_::import("kiln._numpy_interop").attr("from_array")(data).cast<Tensor>();
    return shared.clone().to(dtype.value_or(shared.dtype()));
  }
  std::vector<int64_t> shape;
  std::vector<Scalar> values;
  flatten_data(data, 0, shape, values);
  bool all_bool = !values.empty(), all_int = !values.empty();
  for (const Scalar& s : values) {
    all_bool &= s.is_bool();
    all_int &= s.is_integral() || s.is_bool();
  }
  DType inferred = all_bool ? DType::Bool : all_int ? DType::Int64 : default_float_dtype();
  DType target = dtype.value_or(inferred);
  std::vector<double> as_double;
  std::vector<int64_t> as_int;
  if (is_floating_point(target)) {
    for (const Scalar& s : values) as_double.push_back(s.to<double>());
    return from_vector(as_double, shape).to(target);
  }
  for (const Scalar& s : values) as_int.push_back(s.to<int64_t>());
  return from_vector(as_int, shape).to(target);
}

std::optional<Tensor> as_tensor(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  return std::nullopt;
}

void bind_tensor(py::module_& m) {
  auto cls = py::class_<Tensor>(m, "Tensor", py::dynamic_attr());
  cls.def(py::init<>())
      // Tensor(other): another handle on the same tensor (what Parameter's constructor uses).
      .def(py::init([](const Tensor& other) { return other; }))
      .def_property_readonly("shape", &sizes_object)
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("is_cuda", &Tensor::is_cuda)
      .def_property_readonly("is_meta", &Tensor::is_meta)
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               auto node = t.grad_fn();
                               if (!node) return py::none();
                               return py::str(node->name());
                             })
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& t, bool r) { t.requires_grad_(r); })
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            const Tensor& g = t.grad();
            if (!g.defined()) return py::none();
            return py::cast(g);
          },
          [](Tensor& t, py::handle g) {
            t.mutable_grad() = g.is_none() ? Tensor() : g.cast<Tensor>();
          })
      .def_property(
          "data", [](const Tensor& t) { return t.detach(); },
          [](Tensor& t, const Tensor& value) {
            autograd::NoGradGuard no_grad;
            KILN_CHECK(value.sizes() == t.sizes() && value.dtype() == t.dtype(),
                       "Tensor.data: assigning a tensor of another shape or dtype is not "
                       "supported (got {} {}, expected {} {})",
                       value.sizes(), dtype_name(value.dtype()), t.sizes(), dtype_name(t.dtype()));
            t.copy_(value);
          })
      .def(
          "size",
          [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
            if (dim) return symint_object(t.sym_size(*dim));
            return sizes_object(t);
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
            if (dim) return py::int_(t.stride(*dim));
            auto s = t.strides();
            return py::tuple(py::cast(std::vector<int64_t>(s.begin(), s.end())));
          },
          py::arg("dim") = py::none())
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("storage_offset", &Tensor::storage_offset)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("is_contiguous", [](const Tensor& t) { return t.is_contiguous(); })
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("contiguous",
           [](const Tensor& t) {
             PythonCallSite site;
             return t.contiguous();
           })
      .def("item",
           [](const Tensor& t) {
             PythonCallSite site;
             return scalar_object(t.item());
           })
      .def("tolist",
           [](const Tensor& t) -> py::object {
             PythonCallSite site;
             Tensor c = t.detach();
             py::list flat;
             if (c.dtype() == DType::Bool) {
               for (bool v : c.tolist<bool>()) flat.append(py::bool_(v));
             } else if (c.is_floating_point()) {
               for (double v : c.tolist<double>()) flat.append(py::float_(v));
             } else {
               for (int64_t v : c.tolist<int64_t>()) flat.append(py::int_(v));
             }
             if (c.dim() == 0) return flat[0];
             // Regroup the flat values by the sizes, innermost dim first.
             py::list level = flat;
             auto sizes = c.sizes();
             for (int64_t d = c.dim() - 1; d >= 1; --d) {
               py::list grouped;
               auto n = static_cast<size_t>(sizes[static_cast<size_t>(d)]);
               for (size_t i = 0; i < py::len(level); i += n) {
                 py::list chunk;
                 for (size_t j = 0; j < n; ++j) chunk.append(level[i + j]);
                 grouped.append(chunk);
               }
               level = grouped;
             }
             return level;
           })
      .def("detach", &Tensor::detach)
      .def("detach_",
           [](py::object self) {
             Tensor t = self.cast<Tensor>();
             t.requires_grad_(false);
             return self;
           })
      .def(
          "requires_grad_",
          [](py::object self, bool r) {
            self.cast<Tensor>().requires_grad_(r);
            return self;
          },
          py::arg("requires_grad") = true)
      .def("retain_grad", &Tensor::retain_grad)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def(
          "backward",
          [](const Tensor& t, std::optional<Tensor> gradient, std::optional<bool> retain_graph,
             bool create_graph, std::optional<std::vector<Tensor>> inputs) {
            t.backward(gradient.value_or(Tensor()), retain_graph, create_graph,
                       inputs.value_or(std::vector<Tensor>{}));
          },
          py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(),
          py::arg("create_graph") = false, py::arg("inputs") = py::none())
      .def("register_hook",
           [](const Tensor& t, py::function hook) {
             return t.register_hook([hook](const Tensor& g) -> Tensor {
               py::gil_scoped_acquire gil;
               py::object r = hook(g);
               if (r.is_none()) return Tensor();
               return r.cast<Tensor>();
             });
           })
      .def("remove_hook", &Tensor::remove_hook)
      .def("_to",
           [](const Tensor& t, py::handle dtype_obj, py::handle device_obj, bool copy) {
             PythonCallSite site;
             std::optional<DType> dtype = as_dtype(dtype_obj);
             std::optional<Device> device = as_device(device_obj);
             Tensor r = t;
             if (device && *device != r.device()) r = r.to(*device, copy);
             if (dtype && *dtype != r.dtype()) r = r.to(*dtype, copy && !device);
             if (copy && r.is_same(t)) r = t.clone();
             return r;
           })
      .def("_is_same", &Tensor::is_same)
      // Computes a traced value now (a graph break inside a compiled function; `what` is the
      // reason); a no-op for other tensors.
      .def("_materialize",
           [](const Tensor& t, const std::string& what) {
             PythonCallSite site;
             t.impl()->materialize(what.c_str());
           })
      .def("__repr__",
           [](const Tensor& t) { return t.defined() ? t.str() : "tensor(<undefined>)"; })
      .def("__str__", [](const Tensor& t) { return t.defined() ? t.str() : "tensor(<undefined>)"; })
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return specialize(t.sym_size(0));
           })
      .def("__bool__",
           [](const Tensor& t) {
             PythonCallSite site;
             KILN_CHECK(t.numel() == 1,
                        "Boolean value of Tensor with more than one value is ambiguous (sizes {})",
                        t.sizes());
             return t.item().to<bool>();
           })
      .def("__float__",
           [](const Tensor& t) {
             PythonCallSite site;
             return t.item().to<double>();
           })
      .def("__int__",
           [](const Tensor& t) {
             PythonCallSite site;
             return t.item().to<int64_t>();
           })
      .def("__index__",
           [](const Tensor& t) {
             KILN_CHECK(!t.is_floating_point() && t.numel() == 1,
                        "only integer tensors of a single element can be converted to an index");
             PythonCallSite site;
             return t.item().to<int64_t>();
           })
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<intptr_t>(t.impl()); })
      .def("__neg__",
           [](const Tensor& t) {
             PythonCallSite site;
             return -t;
           })
      .def("__pos__", [](const Tensor& t) { return t; })
      .def("__abs__",
           [](const Tensor& t) {
             PythonCallSite site;
             return t.abs();
           })
      .def("__invert__",
           [](const Tensor& t) {
             PythonCallSite site;
             return ~t;
           })
      .def("__add__", binary([](const auto& a, const auto& b) { return a + b; }))
      .def("__radd__", reflected([](const auto& a, const auto& b) { return a + b; }))
      .def("__sub__", binary([](const auto& a, const auto& b) { return a - b; }))
      .def("__rsub__", reflected([](const auto& a, const auto& b) { return a - b; }))
      .def("__mul__", binary([](const auto& a, const auto& b) { return a * b; }))
      .def("__rmul__", reflected([](const auto& a, const auto& b) { return a * b; }))
      .def("__truediv__", binary([](const auto& a, const auto& b) { return a / b; }))
      .def("__rtruediv__", reflected([](const auto& a, const auto& b) { return a / b; }))
      .def("__floordiv__", binary([](const Tensor& a, const auto& b) {
             return call1("floor_divide", {a, to_tensor_arg(b)});
           }))
      .def("__rfloordiv__", reflected([](const Tensor& a, const Tensor& b) {
             return call1("floor_divide", {a, b});
           }))
      .def("__mod__", binary([](const auto& a, const auto& b) { return a % b; }))
      .def("__rmod__", reflected([](const auto& a, const auto& b) { return a % b; }))
      .def("__pow__", binary([](const Tensor& a, const auto& b) {
             if constexpr (std::is_same_v<std::decay_t<decltype(b)>, Tensor>) {
               return call1("pow", {a, b});
             } else {
               return call1("pow.Tensor_Scalar", {a, b});
             }
           }))
      .def("__rpow__",
           [](const Tensor& a, py::handle b) -> py::object {
             PythonCallSite site;
             if (auto s = as_scalar(b)) return py::cast(call1("pow.Scalar", {*s, a}));
             return not_implemented();
           })
      .def("__matmul__", binary([](const Tensor& a, const auto& b) -> Tensor {
             if constexpr (std::is_same_v<std::decay_t<decltype(b)>, Tensor>) {
               return call1("matmul", {a, b});
             } else {
               throw py::type_error("matmul: expected a Tensor operand, got a number");
             }
           }))
      .def("__rmatmul__", reflected([](const Tensor& a, const Tensor& b) {
             return call1("matmul", {a, b});
           }))
      .def("__and__", binary([](const auto& a, const auto& b) { return a & b; }))
      .def("__rand__", reflected([](const auto& a, const auto& b) { return a & b; }))
      .def("__or__", binary([](const auto& a, const auto& b) { return a | b; }))
      .def("__ror__", reflected([](const auto& a, const auto& b) { return a | b; }))
      .def("__xor__", binary([](const auto& a, const auto& b) { return a ^ b; }))
      .def("__rxor__", reflected([](const auto& a, const auto& b) { return a ^ b; }))
      .def("__lshift__", binary([](const auto& a, const auto& b) { return a << b; }))
      .def("__rshift__", binary([](const auto& a, const auto& b) { return a >> b; }))
      .def("__eq__", binary([](const auto& a, const auto& b) { return a == b; }))
      .def("__ne__", binary([](const auto& a, const auto& b) { return a != b; }))
      .def("__lt__", binary([](const auto& a, const auto& b) { return a < b; }))
      .def("__le__", binary([](const auto& a, const auto& b) { return a <= b; }))
      .def("__gt__", binary([](const auto& a, const auto& b) { return a > b; }))
      .def("__ge__", binary([](const auto& a, const auto& b) { return a >= b; }))
      .def("__iadd__", inplace([](Tensor& a, const Tensor& b) { a.add_(b); }))
      .def("__isub__", inplace([](Tensor& a, const Tensor& b) { a.sub_(b); }))
      .def("__imul__", inplace([](Tensor& a, const Tensor& b) { a.mul_(b); }))
      .def("__itruediv__", inplace([](Tensor& a, const Tensor& b) { a.div_(b); }))
      .def("__iand__", inplace([](Tensor& a, const Tensor& b) {
             ops::call(op("bitwise_and_"), {a, b});
           }))
      .def("__ior__", inplace([](Tensor& a, const Tensor& b) {
             ops::call(op("bitwise_or_"), {a, b});
           }))
      .def("__ixor__", inplace([](Tensor& a, const Tensor& b) {
             ops::call(op("bitwise_xor_"), {a, b});
           }));

  m.def(
      "tensor",
      [](py::handle data, py::handle dtype, py::handle device, bool requires_grad) {
        PythonCallSite site;
        Tensor t = tensor_from_data(data, as_dtype(dtype));
        if (auto d = as_device(device); d && *d != t.device()) t = t.to(*d);
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def("_wrapped_scalar", [](py::handle s) {
    auto v = as_scalar(s);
    if (!v) throw py::type_error("expected a number");
    return wrapped_scalar(*v);
  });
}

}  // namespace kiln::python
