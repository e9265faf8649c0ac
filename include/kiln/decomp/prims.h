#pragma once
// The prim set (DESIGN.md §5, PrimTorch's role): the small closed set of ops every other op
// decomposes into, and that the inductor lowers. Every functional op in the registry is a prim,
// a composite (written in other ops), or has a decomposition; tests/decomp walks the registry.
#include <kiln/ops/registry.h>

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kiln::decomp {

enum class PrimClass {
  Elementwise,  // unary, binary and ternary (where) pointwise math, comparisons
  Conversion,   // dtype/device conversion (_to_copy)
  Reduction,    // sum, prod, amax, amin, argmax, argmin, var_mean (welford)
  Scan,         // cumsum, cumprod
  View,         // view, as_strided, permute, expand, slice, squeeze, unsqueeze: no copy
  Movement,     // cat, flip: copies that only move elements
  Indexing,     // gather, scatter, index, index_put
  Creation,     // full, empty_strided, arange
  Random,       // Philox draws: rand, randn, randint, randperm
  Mutation,     // copy_ (what functionalization turns into a graph output)
  Extern,       // library calls: matmul, convolution, sort, ...
};
std::string_view class_name(PrimClass c);

struct PrimInfo {
  std::string_view name;  // the op's full name
  PrimClass cls;
};

// The prim set, in class order.
std::span<const PrimInfo> prim_table();
// The class of a functional op that is a prim (in-place/out variants: their functional op's).
std::optional<PrimClass> prim_class(const ops::OpDef& op);
inline bool is_prim(const ops::OpDef& op) { return prim_class(op).has_value(); }
// Whether the op can be broken further: a composite, or an op with a decomposition.
bool is_decomposable(const ops::OpDef& op);

// Runs an op as prims: composites and decompositions are expanded recursively (in-place and out=
// variants of a decomposed op write its result with copy_), prims run their kernels. `on_prim`,
// when set, sees every prim call. Raises kiln::Error naming an op that is neither a prim nor
// decomposable.
std::vector<Tensor> call_as_prims(const ops::OpDef& op, ops::Stack args,
                                  const std::function<void(const ops::OpDef&)>& on_prim = {});

// A dispatch mode that runs every op it sees as prims (what call_as_prims installs). Nested in a
// graph tracer's place, it lets whole functions run decomposed.
class DecomposeMode : public ops::DispatchMode {
 public:
  explicit DecomposeMode(std::function<void(const ops::OpDef&)> on_prim = {})
      : on_prim_(std::move(on_prim)) {}
  std::vector<Tensor> dispatch(const ops::OpDef& op, ops::Stack& args) override;

 private:
  std::function<void(const ops::OpDef&)> on_prim_;
};

}  // namespace kiln::decomp
