#pragma once
// KeyWriter: writes graph pieces (constants, metadata) into a string exactly, for the structural
// key and for common subexpression elimination. Every constant is written with its type tag and
// exactly (doubles by their bits), so that 1 and 1.0, or 0.1 and its neighbouring double, differ.
// Symbols are written by their expression, which compares them without recording a guard.
#include <kiln/graph/graph.h>

#include <bit>
#include <string>

namespace kiln::graph::detail {

class KeyWriter {
 public:
  std::string& out() { return s_; }

  void sym(const SymInt& v) {
    // A symbol by its expression: two graphs over the same symbols agree on their names.
    if (v.is_symbolic()) {
      s_ += "s(" + v.str() + ")";
    } else {
      s_ += std::to_string(v.raw());
    }
  }
  void syms(const SymDimVector& v) {
    s_ += '[';
    for (const SymInt& x : v) {
      sym(x);
      s_ += ',';
    }
    s_ += ']';
  }
  void dbl(double d) { s_ += fmt::format("d{:x}", std::bit_cast<uint64_t>(d)); }

  void meta(const ValueMeta& m) {
    s_ += fmt::format("<{},{}:", static_cast<int>(m.dtype), m.device.str());
    syms(m.sizes);
    syms(m.strides);
    sym(m.storage_offset);
    s_ += m.requires_grad ? ",g>" : ">";
  }

  void tensor(const Tensor& t) {
    // A tensor left in the stack (not a use) is a constant captured by identity.
    if (!t.defined()) {
      s_ += "T_";
      return;
    }
    s_ += fmt::format("T@{}", static_cast<const void*>(t.impl()));
    meta(ValueMeta::of(t));
  }

  void constant(const ops::IValue& value) {
    std::visit(
        [this](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            s_ += "N";
          } else if constexpr (std::is_same_v<T, Tensor>) {
            tensor(x);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            s_ += "i" + std::to_string(x);
          } else if constexpr (std::is_same_v<T, double>) {
            dbl(x);
          } else if constexpr (std::is_same_v<T, bool>) {
            s_ += x ? "bT" : "bF";
          } else if constexpr (std::is_same_v<T, Scalar>) {
            if (x.is_floating_point()) {
              s_ += "S";
              dbl(x.to_double());
            } else {
              s_ += fmt::format("S{}{}", x.is_bool() ? "b" : "i", x.to_int());
            }
          } else if constexpr (std::is_same_v<T, std::string>) {
            s_ += fmt::format("'{}:{}", x.size(), x);  // length-prefixed: any content is safe
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            s_ += fmt::format("I[{}]", fmt::join(x, ","));
          } else if constexpr (std::is_same_v<T, std::vector<SymInt>>) {
            s_ += "Y";
            syms(x);
          } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
            s_ += "L[";
            for (const Tensor& t : x) {
              tensor(t);
              s_ += ',';
            }
            s_ += ']';
          } else if constexpr (std::is_same_v<T, DType>) {
            s_ += fmt::format("t{}", static_cast<int>(x));
          } else if constexpr (std::is_same_v<T, Device>) {
            s_ += "v" + x.str();
          } else if constexpr (std::is_same_v<T, SymInt>) {
            s_ += "y";
            sym(x);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            s_ += "D[";
            for (double d : x) {
              dbl(d);
              s_ += ',';
            }
            s_ += ']';
          } else {
            static_assert(sizeof(T) == 0, "structural_key: an IValue alternative is not encoded");
          }
        },
        value.variant());
  }

 private:
  std::string s_;
};

}  // namespace kiln::graph::detail
