#pragma once
// Index expressions of the loop-level IR: integer expressions over loop variables and sizes,
// simplified as they are built so that folded views stay readable ("i0*1024 + i1", not
// "((i0*1024 + i1)/1)%4096"). A size that is not a plain integer (an expression of the
// compilation's size symbols: dynamic shapes) is an invariant atom: it reads no loop variable,
// and folds with constants and other sizes into one expression (`i0 * (s1*32)`).
#include "inductor/size_facts.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::inductor {

class IndexNode;
using Index = std::shared_ptr<const IndexNode>;

class IndexNode {
 public:
  enum class Kind { Const, Size, Var, Add, Mul, FloorDiv, Mod };
  Kind kind;
  int64_t value = 0;  // Const: the value; Var: the variable's number
  Index a, b;
  inductor::Size size;  // Kind::Size: the expression (never a plain constant)

  IndexNode(Kind k, int64_t v, Index x, Index y, inductor::Size s = {})
      : kind(k), value(v), a(std::move(x)), b(std::move(y)), size(std::move(s)) {}
};

Index constant(int64_t v);
// A size: a Const when it is a plain integer, else a Size atom.
Index constant(const Size& size);
Index var(int64_t number);
Index operator+(const Index& a, const Index& b);
Index operator*(const Index& a, const Index& b);
Index floordiv(const Index& a, const Index& b);
Index mod(const Index& a, const Index& b);
inline Index operator+(const Index& a, int64_t b) { return a + constant(b); }
inline Index operator*(const Index& a, int64_t b) { return a * constant(b); }

// The constant value, if the expression is one.
bool is_constant(const Index& e, int64_t* value = nullptr);
// The expression as a size, if it reads no loop variable (a constant or a size expression).
std::optional<Size> invariant(const Index& e);
// C++ source for the expression, variables named by `names` ("i0", ...), sizes by size_cpp.
std::string to_cpp(const Index& e, const std::vector<std::string>& names);
// Whether the expression reads variable `number`.
bool uses_var(const Index& e, int64_t number);

// The coefficient of variable `var` when `e` is affine in it (var occurs only under + and * by
// constants, never under FloorDiv or Mod, nor multiplied by a non-constant); 0 when var does not
// occur; nullopt otherwise. The vectorizer reads a load's stride along the inner loop from it.
std::optional<int64_t> linear_coefficient(const Index& e, int64_t var);
// The same, allowing a coefficient that is a size expression (`i0 * (s1*32)`).
std::optional<Size> linear_size_coefficient(const Index& e, int64_t var);
// `e` with variable `var` replaced by `value`, rebuilt with the simplifying operators.
Index substitute(const Index& e, int64_t var, const Index& value);
// `e` with every variable v replaced by to[v] at once (`to` covers every variable e reads).
Index rename_vars(const Index& e, const std::vector<Index>& to);

// The expression simplified with the loop variables' ranges (variable v in [0, sizes[v])):
// (a * c + r) / c becomes a and (a * c + r) % c becomes r when 0 <= r < c, which a view's
// unravelled index needs to become affine again (and its loop vectorizable). Comparisons with
// symbolic sizes are decided by `facts` (what it cannot prove stays unsimplified).
Index simplify_in_ranges(const Index& e, const Sizes& sizes, const SizeFacts& facts = SizeFacts());

// The linear offset of a multi-index in a strided layout: offset + sum idx[d] * strides[d].
Index strided_offset(const std::vector<Index>& idx, const Sizes& strides, const Size& offset);
// The multi-index (row-major, over `sizes`) of a linear position.
std::vector<Index> unravel(const Index& linear, const Sizes& sizes);

}  // namespace kiln::inductor
