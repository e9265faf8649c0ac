// The kiln Python module's native part, kiln._C: the Python package (python/kiln) builds the
// PyTorch-shaped API on top of it.
#include "bindings.h"

PYBIND11_MODULE(_C, m) {
  using namespace kiln::python;
  m.doc() = "kiln's native core";
  py::register_exception<kiln::Error>(m, "KilnError", PyExc_RuntimeError);
  // kiln's index and type errors are Python's own (translators run newest first, so these are
  // tried before KilnError's).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kiln::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const kiln::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
  bind_dtype_device(m);
  bind_symint(m);
  bind_tensor(m);
  bind_ops(m);
  bind_buffer(m);
  bind_autograd(m);
  bind_nn(m);
  bind_optim(m);
  bind_models(m);
  bind_compile(m);
}
