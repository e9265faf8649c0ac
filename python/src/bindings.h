#pragma once
// Shared pieces of the kiln Python module (_C): conversions between Python objects and kiln
// values, and the registration functions of each part of the module.
#include <kiln/kiln.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace kiln::python {

namespace py = pybind11;

// ---- registration, one per source file ----
void bind_dtype_device(py::module_& m);
void bind_symint(py::module_& m);
void bind_tensor(py::module_& m);
void bind_ops(py::module_& m);
void bind_buffer(py::module_& m);
void bind_autograd(py::module_& m);
void bind_nn(py::module_& m);
void bind_optim(py::module_& m);
void bind_models(py::module_& m);
void bind_compile(py::module_& m);

// ---- conversions ----
// The C++ module of a kiln.nn.Module object, as a shared_ptr that also keeps the Python object
// alive (a Python subclass's forward and __dict__ live there); nn.cpp.
nn::ModulePtr module_holder(py::handle obj);
// The kiln.dtype object for a dtype (one object per dtype, so `t.dtype is kiln.float32` holds).
py::object dtype_object(DType dtype);
// A kiln.dtype, or None when `obj` is no dtype.
std::optional<DType> as_dtype(py::handle obj);
// A kiln.device or a string such as "cpu"; None when `obj` is neither.
std::optional<Device> as_device(py::handle obj);
// A Python bool, int or float (or a numpy scalar of one) as a Scalar; None otherwise.
std::optional<Scalar> as_scalar(py::handle obj);
// A kiln.Tensor (or a subclass such as kiln.nn.Parameter); None otherwise.
std::optional<Tensor> as_tensor(py::handle obj);
// A size as Python sees it: an int, or a kiln.SymInt for a symbolic one (symint.cpp).
py::object symint_object(const SymInt& s);
// A kiln.SymInt; None for anything else (plain ints included).
std::optional<SymInt> as_symint(py::handle obj);
// The plain value of a size: a symbolic one is specialized to its hint under a guard.
int64_t specialize(const SymInt& s);
// The name of an object's Python type ("list", "Tensor"), for error messages.
std::string type_name_of(py::handle obj);
// A Python number of the scalar's kind (bool, int or float).
py::object scalar_object(const Scalar& s);

// ---- the user's Python line ----
// Whether op calls from Python should record the calling Python line (true while a compiled
// function traces, so that graph nodes and graph breaks name the user's file and line).
bool recording_python_sites();
void set_recording_python_sites(bool on);
// The innermost Python frame outside the kiln package, as a SourceLocation whose strings live for
// the process (interned); nullopt when there is no such frame.
std::optional<SourceLocation> python_call_site();
// The kiln package's folder (its frames are not the user's).
void set_package_dir(const std::string& dir);

// Opens a CallSiteScope naming the calling Python line while sites are recorded.
class PythonCallSite {
 public:
  PythonCallSite();
  PythonCallSite(const PythonCallSite&) = delete;
  PythonCallSite& operator=(const PythonCallSite&) = delete;

 private:
  std::optional<SourceLocation> site_;
  std::optional<ops::CallSiteScope> scope_;
};

}  // namespace kiln::python
