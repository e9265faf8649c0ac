#pragma once
// Calls kiln ops by name with Python arguments, as PyTorch's Python argument parser does: the
// overloads of a name (registry entries "max", "max.dim", ...) are tried in order, positional and
// keyword arguments bound against each schema; Python numbers stand for tensors only when no
// overload takes them as they are; `out=` picks the overload's out variant.
#include <string>
#include <vector>

#include "bindings.h"

namespace kiln::python {

class OverloadSet {
 public:
  OverloadSet(std::string python_name, std::vector<const ops::OpDef*> overloads);

  const std::string& name() const { return name_; }
  const std::vector<const ops::OpDef*>& overloads() const { return overloads_; }
  // Whether some overload's first argument is `Tensor self` (the op is also a Tensor method).
  bool is_method() const;

  // Binds and calls. `self` (may be null) is the tensor a method was called on: the first
  // positional argument.
  py::object call(py::handle self, const py::args& args, const py::kwargs& kwargs) const;

 private:
  std::string name_;
  std::vector<const ops::OpDef*> overloads_;
};

// Groups every registered op by its Python name (the schema name without its overload; out=
// variants are reached through `out=`).
std::vector<OverloadSet> overload_sets();

}  // namespace kiln::python
