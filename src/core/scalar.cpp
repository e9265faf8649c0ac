#include <kiln/core/scalar.h>

namespace kiln {

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::Bool:
      return v_.i ? "True" : "False";
    case Kind::Int:
      return std::to_string(v_.i);
    case Kind::Float:
      return fmt::format("{}", v_.d);
  }
  return {};
}

}  // namespace kiln
