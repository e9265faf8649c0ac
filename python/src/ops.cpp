// Every registered op as a function of kiln._C._ops, and as a Tensor method when its first
// argument is `Tensor self` (PyTorch's method variants), bound from the op's schema.
#include "arg_parser.h"

namespace kiln::python {

void bind_ops(py::module_& m) {
  py::module_ ops_module = m.def_submodule("_ops", "kiln's registered ops, called by schema");
  m.def_submodule("return_types", "named tuples of ops with several results");
  py::object tensor_cls = m.attr("Tensor");
  for (OverloadSet set : overload_sets()) {
    std::string name = set.name();
    std::string doc;
    for (const auto* op : set.overloads()) doc += op->schema.str() + "\n";
    ops_module.def(
        name.c_str(),
        [set](const py::args& args, const py::kwargs& kwargs) {
          return set.call(py::handle(), args, kwargs);
        },
        doc.c_str());
    if (set.is_method() && !py::hasattr(tensor_cls, name.c_str())) {
      py::cpp_function method(
          [set](py::object self, const py::args& args, const py::kwargs& kwargs) {
            return set.call(self, args, kwargs);
          },
          py::name(name.c_str()), py::is_method(tensor_cls), py::sibling(py::none()), doc.c_str());
      tensor_cls.attr(name.c_str()) = method;
    }
  }
}

}  // namespace kiln::python
