// kiln.SymInt: a symbolic size (a dimension traced as dynamic) in Python. Arithmetic builds new
// expressions; comparisons and bool() record a guard and answer under the current hint, as in
// the C++ capture; int() / __index__ specialize it (a guard that the size equals its hint), for
// code that needs a plain number.
#include <pybind11/operators.h>

#include "bindings.h"

namespace kiln::python {

int64_t specialize(const SymInt& s) {
  if (!s.is_symbolic()) return s.expect_int();
  std::optional<int64_t> hint = s.maybe_int();
  KILN_CHECK(hint.has_value(), "SymInt {}: no value is known to specialize it to", s.str());
  KILN_CHECK(s == SymInt(*hint), "SymInt {}: its guard against its hint {} failed", s.str(), *hint);
  return *hint;
}

py::object symint_object(const SymInt& s) {
  if (!s.is_symbolic()) return py::int_(s.expect_int());
  return py::cast(s);
}

std::optional<SymInt> as_symint(py::handle obj) {
  if (py::isinstance<SymInt>(obj)) return obj.cast<SymInt>();
  return std::nullopt;
}

namespace {

// The other operand of an arithmetic operator: a SymInt or a Python int; None otherwise.
std::optional<SymInt> operand(py::handle h) {
  if (auto s = as_symint(h)) return s;
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return SymInt(h.cast<int64_t>());
  return std::nullopt;
}

template <typename F>
auto arithmetic(F fn, bool reflected) {
  return [fn, reflected](const SymInt& a, py::handle b) -> py::object {
    auto other = operand(b);
    if (!other) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return symint_object(reflected ? fn(*other, a) : fn(a, *other));
  };
}

template <typename F>
auto comparison(F fn) {
  return [fn](const SymInt& a, py::handle b) -> py::object {
    auto other = operand(b);
    if (!other) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return py::bool_(fn(a, *other));
  };
}

}  // namespace

void bind_symint(py::module_& m) {
  auto add = [](const SymInt& a, const SymInt& b) { return a + b; };
  auto sub = [](const SymInt& a, const SymInt& b) { return a - b; };
  auto mul = [](const SymInt& a, const SymInt& b) { return a * b; };
  auto floordiv = [](const SymInt& a, const SymInt& b) { return a / b; };
  auto mod = [](const SymInt& a, const SymInt& b) { return a % b; };
  py::class_<SymInt>(m, "SymInt")
      .def("__add__", arithmetic(add, false))
      .def("__radd__", arithmetic(add, true))
      .def("__sub__", arithmetic(sub, false))
      .def("__rsub__", arithmetic(sub, true))
      .def("__mul__", arithmetic(mul, false))
      .def("__rmul__", arithmetic(mul, true))
      .def("__floordiv__", arithmetic(floordiv, false))
      .def("__rfloordiv__", arithmetic(floordiv, true))
      .def("__mod__", arithmetic(mod, false))
      .def("__rmod__", arithmetic(mod, true))
      .def("__neg__", [](const SymInt& a) { return symint_object(-a); })
      .def("__eq__", comparison([](const SymInt& a, const SymInt& b) { return a == b; }))
      .def("__ne__", comparison([](const SymInt& a, const SymInt& b) { return a != b; }))
      .def("__lt__", comparison([](const SymInt& a, const SymInt& b) { return a < b; }))
      .def("__le__", comparison([](const SymInt& a, const SymInt& b) { return a <= b; }))
      .def("__gt__", comparison([](const SymInt& a, const SymInt& b) { return a > b; }))
      .def("__ge__", comparison([](const SymInt& a, const SymInt& b) { return a >= b; }))
      .def("__bool__", [](const SymInt& a) { return a != SymInt(0); })
      .def("__int__", &specialize)
      .def("__index__", &specialize)
      .def("__float__", [](const SymInt& a) { return static_cast<double>(specialize(a)); })
      .def("__hash__", [](const SymInt& a) { return py::hash(py::int_(specialize(a))); })
      .def("__repr__", &SymInt::str)
      .def("__str__", &SymInt::str);
}

}  // namespace kiln::python
