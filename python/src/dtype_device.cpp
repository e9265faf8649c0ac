// kiln.dtype and kiln.device, and the conversions every other binding uses.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <array>

#include "bindings.h"

namespace kiln::python {
namespace {

// One Python object per dtype, made at import and owned by the module's attributes
// (kiln._C.float32,
// ...); borrowed here, so that nothing is released after the interpreter finalizes.
std::array<PyObject*, kNumDTypes>& dtype_objects() {
  static std::array<PyObject*, kNumDTypes> objects{};
  return objects;
}

struct PyDType {
  DType dtype;
};

}  // namespace

py::object dtype_object(DType dtype) {
  return py::reinterpret_borrow<py::object>(dtype_objects()[static_cast<size_t>(dtype)]);
}

std::optional<DType> as_dtype(py::handle obj) {
  if (py::isinstance<PyDType>(obj)) return obj.cast<const PyDType&>().dtype;
  return std::nullopt;
}

std::optional<Device> as_device(py::handle obj) {
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<py::str>(obj)) return Device(obj.cast<std::string>());
  return std::nullopt;
}

std::optional<Scalar> as_scalar(py::handle obj) {
  if (PyBool_Check(obj.ptr())) return Scalar(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) return Scalar(obj.cast<int64_t>());
  if (PyFloat_Check(obj.ptr())) return Scalar(PyFloat_AS_DOUBLE(obj.ptr()));
  // A symbolic size used as a number: specialized (a wrapped scalar holds a plain value).
  if (auto s = as_symint(obj)) return Scalar(specialize(*s));
  // numpy scalars (and 0-d arrays): their Python value.
  if (!as_tensor(obj) && py::hasattr(obj, "dtype") && py::hasattr(obj, "item") &&
      py::hasattr(obj, "ndim") && obj.attr("ndim").cast<int>() == 0) {
    py::object value = obj.attr("item")();
    if (PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr())) {
      return as_scalar(value);
    }
  }
  return std::nullopt;
}

std::string type_name_of(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

py::object scalar_object(const Scalar& s) {
  if (s.is_bool()) return py::bool_(s.to<bool>());
  if (s.is_integral()) return py::int_(s.to<int64_t>());
  return py::float_(s.to<double>());
}

void bind_dtype_device(py::module_& m) {
  py::class_<PyDType>(m, "dtype")
      .def_property_readonly("is_floating_point",
                             [](const PyDType& d) { return is_floating_point(d.dtype); })
      .def_property_readonly("itemsize", [](const PyDType& d) { return itemsize(d.dtype); })
      .def("__repr__", [](const PyDType& d) { return "kiln." + std::string(dtype_name(d.dtype)); })
      .def("__eq__",
           [](const PyDType& a, py::handle b) {
             auto other = as_dtype(b);
             return other && *other == a.dtype;
           })
      .def("__hash__", [](const PyDType& d) { return static_cast<int>(d.dtype); })
      .def(py::pickle([](const PyDType& d) { return std::string(dtype_name(d.dtype)); },
                      [](const std::string& name) { return PyDType{*dtype_from_name(name)}; }));
  for (int i = 0; i < kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    py::object obj = py::cast(PyDType{dtype});
    dtype_objects()[static_cast<size_t>(i)] = obj.ptr();
    m.attr(std::string(dtype_name(dtype)).c_str()) = obj;
  }

  py::class_<Device>(m, "device")
      .def(py::init([](const std::string& spec) { return Device(spec); }), py::arg("type"))
      .def(py::init([](const std::string& type, int index) {
             Device d(type);
             return Device(d.type(), static_cast<int8_t>(index));
           }),
           py::arg("type"), py::arg("index"))
      .def_property_readonly("type",
                             [](const Device& d) {
                               std::string s = d.str();
                               return s.substr(0, s.find(':'));
                             })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (!d.has_index()) return py::none();
                               return py::int_(d.index());
                             })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return "device(type='" + d.str() + "')"; })
      .def("__eq__",
           [](const Device& a, py::handle b) {
             auto other = as_device(b);
             return other && *other == a;
           })
      .def("__hash__", [](const Device& d) { return py::hash(py::str(d.str())); });
}

}  // namespace kiln::python
