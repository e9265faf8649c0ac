// numpy interop without copies: kiln tensors expose the buffer protocol (so np.asarray(t) shares
// memory), and _from_buffer wraps any buffer exporter (a numpy array) as a tensor that keeps the
// exporter alive.
#include <fmt/format.h>

#include <memory>

#include "bindings.h"

namespace kiln::python {
namespace {

// The struct-module format character of a dtype (bfloat16 has none).
const char* buffer_format(DType d) {
  switch (d) {
    case DType::Bool:
      return "?";
    case DType::UInt8:
      return "B";
    case DType::Int8:
      return "b";
    case DType::Int16:
      return "h";
    case DType::Int32:
      return "i";
    case DType::Int64:
      return "q";
    case DType::Float16:
      return "e";
    case DType::Float32:
      return "f";
    case DType::Float64:
      return "d";
    case DType::BFloat16:
      return nullptr;
  }
  return nullptr;
}

std::optional<DType> dtype_of_format(std::string fmt, size_t itemsize) {
  // Strip byte-order / alignment prefixes ('<', '=', '@'); big-endian data is refused.
  while (!fmt.empty() && (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@' || fmt[0] == '|')) {
    fmt.erase(0, 1);
  }
  if (fmt.size() != 1) return std::nullopt;
  switch (fmt[0]) {
    case '?':
      return DType::Bool;
    case 'B':
      return DType::UInt8;
    case 'b':
      return DType::Int8;
    case 'h':
      return DType::Int16;
    case 'i':
      return DType::Int32;
    case 'l':
    case 'q':
      return itemsize == 8 ? std::optional(DType::Int64) : std::optional(DType::Int32);
    case 'e':
      return DType::Float16;
    case 'f':
      return DType::Float32;
    case 'd':
      return DType::Float64;
    default:
      return std::nullopt;
  }
}

// What a tensor's exported buffer holds: the tensor (keeping its storage alive) and the shape
// and strides in bytes the Py_buffer points at.
struct ExportedBuffer {
  Tensor tensor;
  std::vector<Py_ssize_t> shape, strides;
};

int get_buffer(PyObject* obj, Py_buffer* view, int flags) {
  try {
    Tensor t = py::handle(obj).cast<Tensor>();
    KILN_CHECK(t.defined() && t.is_cpu(), "numpy(): expected a CPU tensor, got {}",
               t.defined() ? t.device().str() : "an undefined tensor");
    const char* format = buffer_format(t.dtype());
    KILN_CHECK(format != nullptr,
               "numpy(): bfloat16 has no numpy dtype; convert with .float() first");
    {
      // A traced value is computed first (a graph break inside a compiled function).
      PythonCallSite site;
      t.impl()->materialize("Tensor.numpy()");
    }
    auto exported = std::make_unique<ExportedBuffer>();
    exported->tensor = t;
    auto item = static_cast<Py_ssize_t>(t.itemsize());
    for (int64_t d = 0; d < t.dim(); ++d) {
      exported->shape.push_back(static_cast<Py_ssize_t>(t.size(d)));
      exported->strides.push_back(static_cast<Py_ssize_t>(t.stride(d)) * item);
    }
    view->obj = obj;
    Py_INCREF(obj);
    view->buf = static_cast<char*>(t.data_ptr());
    view->len = static_cast<Py_ssize_t>(t.numel()) * item;
    view->readonly = 0;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
    view->ndim = static_cast<int>(t.dim());
    view->shape = exported->shape.data();
    view->strides = exported->strides.data();
    view->suboffsets = nullptr;
    view->internal = exported.release();
    return 0;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    view->obj = nullptr;
    return -1;
  }
}

void release_buffer(PyObject*, Py_buffer* view) {
  std::unique_ptr<ExportedBuffer> owned(static_cast<ExportedBuffer*>(view->internal));
}

PyBufferProcs tensor_buffer_procs{get_buffer, release_buffer};

}  // namespace

void bind_buffer(py::module_& m) {
  auto* type = reinterpret_cast<PyTypeObject*>(m.attr("Tensor").ptr());
  type->tp_as_buffer = &tensor_buffer_procs;

  // A tensor sharing the memory of a buffer exporter (a numpy array); the exporter stays alive as
  // long as the tensor's storage does.
  m.def("_from_buffer", [](py::handle obj) {
    auto view = std::make_shared<Py_buffer>();
    if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_RECORDS_RO | PyBUF_FORMAT) != 0) {
      throw py::error_already_set();
    }
    std::optional<DType> dtype = dtype_of_format(view->format != nullptr ? view->format : "B",
                                                 static_cast<size_t>(view->itemsize));
    std::vector<int64_t> sizes, strides;
    bool strides_ok = true;
    for (int d = 0; d < view->ndim; ++d) {
      sizes.push_back(view->shape[d]);
      strides_ok &= view->strides[d] >= 0 && view->strides[d] % view->itemsize == 0;
      strides.push_back(view->strides[d] / view->itemsize);
    }
    if (!dtype || !strides_ok) {
      std::string fmt = view->format != nullptr ? view->format : "?";
      PyBuffer_Release(view.get());
      if (!strides_ok) {
        throw py::value_error(
            "from_numpy: the array has negative or unaligned strides; pass a copy "
            "(numpy.ascontiguousarray)");
      }
      throw py::type_error(fmt::format(
          "from_numpy: the array's dtype (buffer format '{}') has no kiln dtype; expected "
          "bool, uint8, int8, int16, int32, int64, float16, float32 or float64",
          fmt));
    }
    return from_blob(view->buf, sizes, strides, *dtype, [view](void*) {
      if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release
      py::gil_scoped_acquire gil;
      PyBuffer_Release(view.get());
    });
  });
}

}  // namespace kiln::python
