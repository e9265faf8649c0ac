#include "inductor/lowering.h"

#include "inductor/gemm_alternative.h"

#include "graph/meta_twins.h"

#include <kiln/core/error.h>
#include <kiln/decomp/prims.h>
#include <kiln/symbolic/sym_node.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace kiln::inductor {

namespace {

using Loader = std::function<Expr(const std::vector<Index>&)>;
using ValueKey = std::pair<const graph::Node*, int>;

// The environment of a graph's symbolic sizes (null for a static graph).
std::shared_ptr<const symbolic::ShapeEnv> environment_of(const graph::Graph& g) {
  const auto env_of = [](const SymInt& s) -> std::shared_ptr<const symbolic::ShapeEnv> {
    const symbolic::SymNode* node = symbolic::sym_node_of(s);
    return node != nullptr ? node->env() : nullptr;
  };
  for (const auto& n : g.nodes()) {
    for (const graph::ValueMeta& m : n->outputs) {
      for (const SymInt& s : m.sizes) {
        if (auto env = env_of(s)) return env;
      }
      for (const SymInt& s : m.strides) {
        if (auto env = env_of(s)) return env;
      }
      if (auto env = env_of(m.storage_offset)) return env;
    }
  }
  return nullptr;
}

// Layout decisions (which dimension is outermost) read the sizes at their hints: a dense layout
// orders its dimensions the same way for every size its guards allow.
std::vector<int64_t> hints(const Sizes& v, const SizeFacts& facts) {
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (const Size& s : v) out.push_back(facts.hint(s));
  return out;
}

std::vector<Index> vars(size_t n, size_t first = 0) {
  std::vector<Index> v;
  for (size_t i = 0; i < n; ++i) v.push_back(var(static_cast<int64_t>(first + i)));
  return v;
}

// The multi-index of storage position q (relative to the layout's offset) in a dense,
// non-overlapping layout: dimensions by decreasing stride.
std::vector<Index> unravel_by_strides(const Index& q, const Sizes& sizes, const Sizes& strides,
                                      const SizeFacts& facts) {
  std::vector<Index> idx(sizes.size(), constant(0));
  bool outermost = true;
  for (int64_t dim : graph::outermost_first(IntList(hints(strides, facts)))) {
    const auto d = static_cast<size_t>(dim);
    if (sizes[d] == Size(1)) continue;
    Index i = floordiv(q, constant(strides[d]));
    idx[d] = outermost ? i : mod(i, constant(sizes[d]));
    outermost = false;
  }
  return idx;
}

// The C++-visible name of each pointwise prim the code generator knows, by prim.
const std::set<std::string>& pointwise_prims() {
  static const std::set<std::string> names = {
      "abs",     "neg",         "exp",   "exp2",        "expm1",      "log",         "log2",
      "log10",   "log1p",       "sin",   "cos",         "tan",        "asin",        "acos",
      "atan",    "sinh",        "cosh",  "tanh",        "asinh",      "acosh",       "atanh",
      "erf",     "erfc",        "sqrt",  "rsqrt",       "floor",      "ceil",        "round",
      "trunc",   "bitwise_not", "add",   "sub",         "mul",        "div",         "pow",
      "maximum", "minimum",     "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "eq",
      "ne",      "lt",          "le",    "gt",          "ge",         "where"};
  return names;
}

bool is_comparison(const std::string& op) {
  return op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
}

int category(DType d) { return d == DType::Bool ? 0 : is_floating_point(d) ? 2 : 1; }

// The dtype two operands are compared in: PyTorch's rule that a 0-dim operand does not promote
// within its category.
DType comparison_dtype(const graph::ValueMeta& a, const graph::ValueMeta& b) {
  const bool a0 = a.sizes.empty(), b0 = b.sizes.empty();
  if (a0 != b0 && category(a.dtype) == category(b.dtype)) return a0 ? b.dtype : a.dtype;
  if (a0 != b0 && category(a.dtype) != category(b.dtype)) {
    const auto& higher = category(a.dtype) > category(b.dtype) ? a : b;
    return higher.dtype;
  }
  return promote_types(a.dtype, b.dtype);
}

// One storage: a graph input or an op output that is no view; views of it load through it.
struct Storage {
  Sizes sizes, strides;
  Size offset = 0;
  DType dtype = DType::Float32;
  Loader load;      // lazy: the value at a multi-index of `sizes`
  int buffer = -1;  // realized
  int reads = 0;    // op-node reads and graph outputs of values on this storage
};

// A graph value: its layout on a storage.
struct Lowered {
  int storage = -1;
  Sizes sizes, strides;
  Size offset = 0;
  DType dtype = DType::Float32;
};

class Lowering {
 public:
  // Whether the op of this full name becomes loops (generates_loops).
  static bool has_loops(const std::string& name) { return loop_lowering(name) != nullptr; }

  Lowering(const graph::Graph& g, LoweringOptions options) : graph_(g), options_(options) {
    if (auto env = environment_of(g)) {
      program_.facts = SizeFacts(env);
      program_.num_symbols = env->symbols().size();
    }
  }

  Program run() {
    count_reads();
    for (const auto& n : graph_.nodes()) {
      if (n->kind == graph::NodeKind::Input) {
        lower_input(*n);
      } else {
        lower_node(*n);
      }
    }
    for (const graph::Value& v : graph_.outputs()) {
      const Lowered& l = value(v);
      realize(l.storage);
      const Storage& s = storages_[static_cast<size_t>(l.storage)];
      program_.outputs.push_back(OutputView{s.buffer, l.sizes, l.strides, l.offset});
    }
    return std::move(program_);
  }

 private:
  void count_reads() {
    // Reads per value; a storage's reads are summed when values are lowered (views add theirs).
    for (const auto& n : graph_.nodes()) {
      for (const graph::TensorUse& u : n->uses) ++value_reads_[{u.value.node, u.value.output}];
    }
    for (const graph::Value& v : graph_.outputs()) ++value_reads_[{v.node, v.output}];
  }

  const Lowered& value(graph::Value v) const { return lowered_.at({v.node, v.output}); }

  Size size_of(const SymInt& s) const {
    if (!s.is_symbolic()) return Size(s.raw());
    return program_.facts.simplify(symbolic::expr_of(s));
  }
  Sizes sizes_of(const SymDimVector& v) const {
    Sizes out;
    out.reserve(v.size());
    for (const SymInt& s : v) out.push_back(size_of(s));
    return out;
  }

  int new_buffer(Buffer b) {
    b.name = fmt::format("buf{}", program_.buffers.size());
    program_.buffers.push_back(std::move(b));
    return static_cast<int>(program_.buffers.size()) - 1;
  }

  int new_storage(const graph::ValueMeta& meta, Loader load, int buffer, ValueKey key) {
    Storage s;
    s.sizes = sizes_of(meta.sizes);
    s.strides = sizes_of(meta.strides);
    s.offset = size_of(meta.storage_offset);
    s.dtype = meta.dtype;
    s.load = std::move(load);
    s.buffer = buffer;
    storages_.push_back(std::move(s));
    const int id = static_cast<int>(storages_.size()) - 1;
    set_value(key, id, meta);
    return id;
  }

  void set_value(ValueKey key, int storage, const graph::ValueMeta& meta) {
    Lowered l{storage, sizes_of(meta.sizes), sizes_of(meta.strides), size_of(meta.storage_offset),
              meta.dtype};
    storages_[static_cast<size_t>(storage)].reads += value_reads_[key];
    lowered_[key] = std::move(l);
  }

  void lower_input(const graph::Node& n) {
    const graph::ValueMeta& m = n.outputs[0];
    Buffer b;
    b.sizes = sizes_of(m.sizes);
    b.strides = sizes_of(m.strides);
    b.offset = size_of(m.storage_offset);
    b.dtype = m.dtype;
    b.role = Buffer::Role::Input;
    b.host_scalar = m.device.is_cpu() && m.sizes.empty() && b.offset == Size(0);
    b.input = static_cast<int>(program_.num_inputs++);
    new_storage(m, nullptr, new_buffer(std::move(b)), {&n, 0});
  }

  // The value of a lowered graph value at a multi-index of its sizes.
  Expr load_value(const Lowered& l, const std::vector<Index>& idx) {
    const Storage& s = storages_[static_cast<size_t>(l.storage)];
    if (s.buffer >= 0) return load(s.buffer, strided_offset(idx, l.strides, l.offset), l.dtype);
    if (l.sizes == s.sizes && l.strides == s.strides && l.offset == s.offset) return s.load(idx);
    const Index q = strided_offset(idx, l.strides, l.offset - s.offset);
    return s.load(unravel_by_strides(q, s.sizes, s.strides, program_.facts));
  }

  // Gives a lazy storage a buffer (with its own layout), computed by a pointwise kernel.
  void realize(int storage) {
    Storage& s = storages_[static_cast<size_t>(storage)];
    if (s.buffer >= 0) return;
    // An empty value's strides may be anything (a full() of size 0); its kernel's loops would
    // not run, but code sized by its dims could divide by them: the graph stays interpreted.
    KILN_CHECK(graph::is_dense(IntList(hints(s.sizes, program_.facts)),
                               IntList(hints(s.strides, program_.facts))),
               "inductor: a lazy value with a non-dense layout (an empty one) is not generated");
    Buffer b;
    b.sizes = s.sizes;
    b.strides = s.strides;
    b.offset = s.offset;
    b.dtype = s.dtype;
    const int buffer = new_buffer(std::move(b));
    // The loops run in the buffer's memory order (a channels-last value's innermost loop is over
    // the channels), so that the store, and loads of values in the same layout, are contiguous.
    Kernel k;
    k.kind = Kernel::Kind::Pointwise;
    std::vector<Index> idx(s.sizes.size());
    size_t loop = 0;
    for (int64_t dim : graph::outermost_first(IntList(hints(s.strides, program_.facts)))) {
      const auto d = static_cast<size_t>(dim);
      idx[d] = var(static_cast<int64_t>(loop++));
      k.ranges.push_back(s.sizes[d]);
    }
    k.body = s.load(idx);
    k.output = buffer;
    k.store = strided_offset(idx, s.strides, s.offset);
    emit(std::move(k));
    s.buffer = buffer;
    s.load = nullptr;
  }

  // A kernel as a loop nest of its own (the scheduler fuses nests).
  void emit(Kernel k) {
    LoopNest nest;
    nest.parts.push_back(std::move(k));
    program_.steps.emplace_back(std::move(nest));
  }

  using NodeLowering = void (Lowering::*)(const graph::Node&);

  // How a node becomes loops, or null when it is an extern call.
  static NodeLowering loop_lowering(const graph::Node& n) {
    const std::string name = n.op->full_name();
    // A copy to another device stays an extern call.
    if (name == "_to_copy" && n.outputs[0].device != n.uses.at(0).value.meta().device) {
      return nullptr;
    }
    return loop_lowering(name);
  }
  static NodeLowering loop_lowering(const std::string& name) {
    static const std::map<std::string, NodeLowering> table = [] {
      std::map<std::string, NodeLowering> t = {{"_to_copy", &Lowering::lower_to_copy},
                                               {"full", &Lowering::lower_creation},
                                               {"empty_strided", &Lowering::lower_creation},
                                               {"arange.start_step", &Lowering::lower_creation},
                                               {"sum", &Lowering::lower_reduction},
                                               {"amax", &Lowering::lower_reduction},
                                               {"amin", &Lowering::lower_reduction},
                                               {"prod.dim_int", &Lowering::lower_reduction},
                                               {"var_mean.correction", &Lowering::lower_var_mean}};
      for (const std::string& name : pointwise_prims()) t[name] = &Lowering::lower_pointwise;
      return t;
    }();
    auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
  }

  // Every dtype has generated code (16-bit floats computed in float, rounded per op).
  void lower_node(const graph::Node& n) {
    if (n.op->kind == ops::OpKind::View) return lower_view(n);
    const NodeLowering lowering = loop_lowering(n);
    if (lowering == nullptr) return lower_extern(n);
    (this->*lowering)(n);
  }

  // Views: the output's meta layout is on the same storage as the input's.
  void lower_view(const graph::Node& n) {
    const Lowered& in = value(n.uses.at(0).value);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const graph::ValueMeta& m = n.outputs[i];
      // as_strided may reach positions outside a lazy storage's dense layout: give it memory.
      if (n.op->full_name() == "as_strided") realize(in.storage);
      set_value({&n, static_cast<int>(i)}, in.storage, m);
    }
  }

  std::vector<const Lowered*> inputs_of(const graph::Node& n) {
    std::vector<const Lowered*> in;
    for (const graph::TensorUse& u : n.uses) in.push_back(&value(u.value));
    return in;
  }

  // A pointwise node's lazy storage. Readers recompute it inline, unless several read it and it
  // is not cheap (more than a few ops), or many read it: then it gets a buffer at once.
  void finish_pointwise(const graph::Node& n, Loader load) { lazy_output(n, 0, std::move(load)); }

  // The cost of a lazy storage's body in simple ops (shared subexpressions once): a
  // transcendental function counts as kInlineOps, so that one read twice is computed once.
  static size_t body_size(const Storage& s) {
    std::set<const ExprNode*> seen;
    size_t cost = 0;
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      if (e->kind == ExprNode::Kind::Constant || !seen.insert(e.get()).second) return;
      cost += e->kind == ExprNode::Kind::Call && is_math_function(e->op) ? kInlineOps : 1;
      for (const Expr& a : e->args) visit(a);
    };
    visit(s.load(vars(s.sizes.size())));
    return cost;
  }
  static constexpr int kRealizeReads = 4;
  static constexpr size_t kInlineOps = 8;

  // The loader of input `k` broadcast to the output's sizes.
  Loader broadcast_loader(const Lowered& in, const Sizes& out_sizes) {
    return [this, in, out_sizes](const std::vector<Index>& idx) {
      std::vector<Index> sub;
      const size_t lead = out_sizes.size() - in.sizes.size();
      for (size_t d = 0; d < in.sizes.size(); ++d) {
        const Size& size = in.sizes[d];
        const Size& out_size = out_sizes[lead + d];
        // A size that is 1 where the output's is not is broadcast. A symbolic size that was 1 at
        // the traced sizes (a slice's length ((s0 + 1)//2) - 1) was broadcast by the trace,
        // which guarded it to stay 1: its hint decides, since the ranges cannot prove it.
        const bool broadcast =
            size == Size(1) ? out_size != Size(1)
                            : program_.facts.hint(size) == 1 && program_.facts.hint(out_size) != 1;
        sub.push_back(broadcast ? constant(0) : idx[lead + d]);
      }
      return load_value(in, sub);
    };
  }

  void lower_pointwise(const graph::Node& n) {
    const std::string op = n.op->full_name();
    const graph::ValueMeta& out = n.outputs[0];
    const Sizes sizes = sizes_of(out.sizes);
    std::vector<Loader> args;
    std::vector<graph::ValueMeta> metas;
    // Tensor arguments in schema order (uses are in argument order).
    for (const graph::TensorUse& u : n.uses) {
      args.push_back(broadcast_loader(value(u.value), sizes));
      metas.push_back(u.value.meta());
    }
    DType compute = out.dtype;
    if (is_comparison(op)) compute = comparison_dtype(metas.at(0), metas.at(1));
    std::string fn = op;
    // Integer division (and pow) raise on bad operands in eager code: their kernels do that.
    if (!is_floating_point(compute) && compute != DType::Bool &&
        (op == "pow" || (op == "div" && !n.args.at(2).is_none()))) {
      return lower_extern(n);
    }
    double alpha = 1;
    if (op == "add" || op == "sub") alpha = n.args.at(2).to_scalar().to<double>();
    if (op == "div") {
      const auto mode = n.args.at(2).to_optional_string();
      if (mode) fn = "div_" + *mode;  // div_trunc, div_floor
    }
    const DType out_dtype = out.dtype;
    finish_pointwise(n, [args, compute, fn, alpha, out_dtype](const std::vector<Index>& idx) {
      std::vector<Expr> values;
      for (size_t k = 0; k < args.size(); ++k) {
        Expr v = args[k](idx);
        // where's condition stays bool; everything else computes in `compute`.
        if (!(fn == "where" && k == 0)) v = cast(v, compute);
        values.push_back(v);
      }
      if (alpha != 1) values[1] = call("mul", {values[1], constant_of(alpha, compute)}, compute);
      return call(fn, values, is_comparison(fn) ? DType::Bool : out_dtype);
    });
  }

  void lower_to_copy(const graph::Node& n) {
    const Lowered in = value(n.uses.at(0).value);
    const DType dtype = n.outputs[0].dtype;
    finish_pointwise(n, [this, in, dtype](const std::vector<Index>& idx) {
      return cast(load_value(in, idx), dtype);
    });
  }

  void lower_creation(const graph::Node& n) {
    const std::string op = n.op->full_name();
    const DType dtype = n.outputs[0].dtype;
    Loader load;
    if (op == "full") {
      const Scalar v = n.args.at(1).to_scalar();
      const Expr c = v.is_floating_point() ? constant_of(v.to<double>(), dtype)
                                           : integer_constant(v.to<int64_t>(), dtype);
      load = [c](const std::vector<Index>&) { return c; };
    } else if (op == "empty_strided") {
      // Uninitialized memory in eager: zeros here.
      const Expr c = integer_constant(0, dtype);
      load = [c](const std::vector<Index>&) { return c; };
    } else {
      const Scalar start = n.args.at(0).to_scalar(), step = n.args.at(2).to_scalar();
      const bool integral = !is_floating_point(dtype);
      load = [start, step, dtype, integral](const std::vector<Index>& idx) {
        const Expr i = index_value(idx.at(0));
        if (integral) {
          return cast(call("add",
                           {call("mul", {i, integer_constant(step.to<int64_t>(), DType::Int64)},
                                 DType::Int64),
                            integer_constant(start.to<int64_t>(), DType::Int64)},
                           DType::Int64),
                      dtype);
        }
        // As the eager kernel: start + i * step in float64, then rounded.
        return cast(
            call("add",
                 {call("mul",
                       {cast(i, DType::Float64), constant_of(step.to<double>(), DType::Float64)},
                       DType::Float64),
                  constant_of(start.to<double>(), DType::Float64)},
                 DType::Float64),
            dtype);
      };
    }
    finish_pointwise(n, std::move(load));
  }

  // Reduced dims of a reduction node's input.
  std::vector<bool> reduced_dims(const graph::Node& n, size_t rank) {
    std::vector<int64_t> dims;
    const std::string op = n.op->full_name();
    if (op == "prod.dim_int") {
      dims = {n.args.at(1).to_int()};
    } else if (!n.args.at(1).is_none()) {
      dims = n.args.at(1).to_int_list();
    }
    std::vector<bool> reduced(rank, dims.empty());
    // A 0-dim input accepts dim 0 or -1 and has nothing to reduce over.
    if (rank == 0) return reduced;
    const int64_t r = static_cast<int64_t>(rank);
    for (int64_t d : dims) reduced[static_cast<size_t>((d % r + r) % r)] = true;
    return reduced;
  }

  using ReductionBody = std::function<Expr(Expr, const std::vector<Index>&)>;

  // out[idx] = reduce over the reduced dims of body(full index), the node's output `output`.
  int emit_reduction(const graph::Node& n, int output, const std::vector<bool>& reduced,
                     const Lowered& in, const std::string& kind, DType body_dtype,
                     const ReductionBody& transform) {
    const graph::ValueMeta& out_meta = n.outputs[static_cast<size_t>(output)];
    const int buffer =
        reduce_into(buffer_like(out_meta), n, output, reduced, in, kind, body_dtype, transform);
    new_storage(out_meta, nullptr, buffer, {&n, output});
    return buffer;
  }

  // A buffer with a value's sizes, layout and dtype.
  Buffer buffer_like(const graph::ValueMeta& meta) {
    Buffer b;
    b.sizes = sizes_of(meta.sizes);
    b.strides = sizes_of(meta.strides);
    b.offset = size_of(meta.storage_offset);
    b.dtype = meta.dtype;
    return b;
  }

  // The same reduction into `b`, a new buffer of the output's sizes that no graph value names
  // (its caller finishes it: a mean from a sum).
  int reduce_into(Buffer b, const graph::Node& n, int output, const std::vector<bool>& reduced,
                  const Lowered& in, const std::string& kind, DType body_dtype,
                  const ReductionBody& transform) {
    const Sizes out_sizes = sizes_of(n.outputs[static_cast<size_t>(output)].sizes);
    const bool keepdim = out_sizes.size() == in.sizes.size() && !in.sizes.empty();
    Sizes reduction_ranges;
    std::vector<Index> full(in.sizes.size());
    size_t out_pos = 0, red_pos = 0;
    for (size_t d = 0; d < in.sizes.size(); ++d) {
      if (reduced[d]) {
        full[d] = var(static_cast<int64_t>(out_sizes.size() + red_pos++));
        reduction_ranges.push_back(in.sizes[d]);
        if (keepdim) ++out_pos;
      } else {
        full[d] = var(static_cast<int64_t>(out_pos++));
      }
    }
    const Sizes strides = b.strides;
    const Size offset = b.offset;
    const int buffer = new_buffer(std::move(b));
    Kernel k;
    k.kind = Kernel::Kind::Reduction;
    k.ranges = out_sizes;
    k.reduction_ranges = reduction_ranges;
    k.reduction = kind;
    k.body = transform(cast(load_value(in, full), body_dtype), vars(out_sizes.size()));
    k.output = buffer;
    k.store = strided_offset(vars(out_sizes.size()), strides, offset);
    emit(std::move(k));
    return buffer;
  }

  static Expr identity(Expr e, const std::vector<Index>&) { return e; }

  void lower_reduction(const graph::Node& n) {
    const Lowered in = value(n.uses.at(0).value);
    const std::string op = n.op->full_name();
    const std::vector<bool> reduced = reduced_dims(n, in.sizes.size());
    const std::string kind = op == "sum"    ? "sum"
                             : op == "amax" ? "max"
                             : op == "amin" ? "min"
                                            : "prod";
    if (kind == "sum" && lower_sum_of_a_constant(n, reduced, in)) return;
    emit_reduction(n, 0, reduced, in, kind, n.outputs[0].dtype, identity);
  }

  // A sum over a constant (decompositions count a symbolic number of elements as the sum of a
  // tensor of ones) is the constant times the number of elements: a value, not a sweep over
  // every element.
  bool lower_sum_of_a_constant(const graph::Node& n, const std::vector<bool>& reduced,
                               const Lowered& in) {
    const Expr value = load_value(in, std::vector<Index>(in.sizes.size(), constant(0)));
    if (value->kind != ExprNode::Kind::Constant ||
        (!value->is_integer_constant && !std::isfinite(value->number))) {
      return false;
    }
    Size count(1);
    for (size_t d = 0; d < in.sizes.size(); ++d) {
      if (reduced[d]) count = count * in.sizes[d];
    }
    const DType dtype = n.outputs[0].dtype;
    const Expr product =
        call("mul", {cast(value, dtype), cast(index_value(constant(count)), dtype)}, dtype);
    finish_pointwise(n, [product](const std::vector<Index>&) { return product; });
    return true;
  }

  // e / divisor, as a product with the reciprocal where that is a normal number: a division per
  // element is the costliest part of a row's statistics (layer_norm over 4096 columns ran at
  // half the memory's speed). Exact for powers of two, within an ulp per element otherwise (the
  // order of the sum already differs from eager's by more).
  static Expr scaled_by_reciprocal(Expr e, double divisor, DType dtype) {
    const double r = 1.0 / divisor;
    const bool wide_float = dtype == DType::Float32 || dtype == DType::Float64;
    if (!wide_float || !std::isnormal(r) ||
        (dtype == DType::Float32 && !std::isnormal(static_cast<float>(r)))) {
      return call("div", {std::move(e), constant_of(divisor, dtype)}, dtype);
    }
    return call("mul", {std::move(e), constant_of(r, dtype)}, dtype);
  }

  // var_mean as two reductions: the mean, then the sum of squared deviations from it.
  void lower_var_mean(const graph::Node& n) {
    const Lowered in = value(n.uses.at(0).value);
    std::vector<bool> reduced = reduced_dims(n, in.sizes.size());
    Size count(1);
    for (size_t d = 0; d < in.sizes.size(); ++d)
      count = count * (reduced[d] ? in.sizes[d] : Size(1));
    double correction = 1;
    if (!n.args.at(2).is_none()) correction = n.args.at(2).to_scalar().to<double>();
    const DType dtype = n.outputs[1].dtype;
    Size divisor_size = count;
    if (!count.is_constant()) {
      KILN_CHECK(correction == std::floor(correction) && correction >= 0,
                 "inductor: var_mean over a symbolic count {} with correction {}", count.str(),
                 correction);
      divisor_size = count - Size(static_cast<int64_t>(correction));
    }
    // A symbolic count: a product with its reciprocal, computed once per call (within an ulp of
    // the quotient, as the constant count's product; a zero count gives inf and NaN as the
    // division does).
    const auto divided = [](Expr e, const Size& by, double constant_by, DType t) {
      if (by.is_constant()) return scaled_by_reciprocal(std::move(e), constant_by, t);
      const Expr reciprocal =
          call("div", {constant_of(1.0, t), cast(index_value(constant(by)), t)}, t);
      return call("mul", {std::move(e), reciprocal}, t);
    };
    const double constant_count = count.is_constant() ? static_cast<double>(count.value()) : 0;
    const double divisor = std::max(0.0, constant_count - correction);
    // (16-bit floats keep scaled elements: a row's plain sum could overflow their range.)
    if (reduces_trailing_dims(reduced) && (dtype == DType::Float32 || dtype == DType::Float64)) {
      lower_row_var_mean(
          n, reduced, in, dtype,
          [=](Expr e) { return divided(std::move(e), count, constant_count, dtype); },
          [=](Expr e) { return divided(std::move(e), divisor_size, divisor, dtype); });
      return;
    }
    const int mean_buffer =
        emit_reduction(n, 1, reduced, in, "sum", dtype,
                       [count, constant_count, dtype, divided](Expr e, const std::vector<Index>&) {
                         return divided(std::move(e), count, constant_count, dtype);
                       });
    const Buffer mean = program_.buffers[static_cast<size_t>(mean_buffer)];
    emit_reduction(n, 0, reduced, in, "sum", dtype,
                   [mean, mean_buffer, dtype, divisor, divisor_size, divided](
                       Expr e, const std::vector<Index>& out) {
                     const Expr m =
                         load(mean_buffer, strided_offset(out, mean.strides, mean.offset), dtype);
                     const Expr d = call("sub", {e, m}, dtype);
                     return divided(call("mul", {d, d}, dtype), divisor_size, divisor, dtype);
                   });
  }

  // Whether the reduced dims are the last ones (a row's statistics: layer and group norm).
  static bool reduces_trailing_dims(const std::vector<bool>& reduced) {
    const auto first = std::find(reduced.begin(), reduced.end(), true);
    return first != reduced.end() && std::all_of(first, reduced.end(), [](bool r) { return r; });
  }

  // var_mean over each row: plain sums, each scaled once per row by a lazy value (`mean_of`,
  // `var_of` of the sum) instead of once per element; readers inline it, and the vector loops
  // hoist it out of theirs. Layer norm's statistics take an add per element for the mean and a
  // subtraction, a product and an add for the variance (eager's kernel's count), not a multiply
  // more each. The channel statistics of batch norm keep per-element scaling: their sums run
  // along columns (codegen's column sums), which take reductions only.
  void lower_row_var_mean(const graph::Node& n, const std::vector<bool>& reduced, const Lowered& in,
                          DType dtype, const std::function<Expr(Expr)>& mean_of,
                          const std::function<Expr(Expr)>& var_of) {
    // The sums in buffers laid out as the mean (var has the same sizes and layout).
    const Buffer sums = buffer_like(n.outputs[1]);
    const Sizes strides = sums.strides;
    const Size offset = sums.offset;
    const int total = reduce_into(sums, n, 1, reduced, in, "sum", dtype, identity);
    const Loader mean = [=](const std::vector<Index>& idx) {
      return mean_of(load(total, strided_offset(idx, strides, offset), dtype));
    };
    lazy_output(n, 1, mean);
    const int squares = reduce_into(sums, n, 0, reduced, in, "sum", dtype,
                                    [mean, dtype](Expr e, const std::vector<Index>& out) {
                                      const Expr d = call("sub", {std::move(e), mean(out)}, dtype);
                                      return call("mul", {d, d}, dtype);
                                    });
    lazy_output(n, 0, [=](const std::vector<Index>& idx) {
      return var_of(load(squares, strided_offset(idx, strides, offset), dtype));
    });
  }

  // Output `output` of `n` as a lazy value, realized as finish_pointwise's rule says.
  void lazy_output(const graph::Node& n, int output, Loader load) {
    const int id =
        new_storage(n.outputs[static_cast<size_t>(output)], std::move(load), -1, {&n, output});
    Storage& s = storages_[static_cast<size_t>(id)];
    if (s.reads > kRealizeReads || (s.reads > 1 && body_size(s) > kInlineOps)) realize(id);
  }

  void lower_extern(const graph::Node& n) {
    ExternCall e;
    e.op = n.op;
    e.args = n.args;
    for (const graph::TensorUse& u : n.uses) {
      const Lowered& l = value(u.value);
      realize(l.storage);
      ExternCall::Input in;
      in.arg = u.arg;
      in.element = u.element;
      in.buffer = storages_[static_cast<size_t>(l.storage)].buffer;
      in.sizes = l.sizes;
      in.strides = l.strides;
      in.offset = l.offset;
      e.inputs.push_back(std::move(in));
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const graph::ValueMeta& m = n.outputs[i];
      Buffer b;
      b.sizes = sizes_of(m.sizes);
      b.strides = sizes_of(m.strides);
      b.offset = size_of(m.storage_offset);
      b.dtype = m.dtype;
      const int buffer = new_buffer(std::move(b));
      e.outputs.push_back(buffer);
      new_storage(m, nullptr, buffer, {&n, static_cast<int>(i)});
    }
    if (options_.gemm_alternatives && !program_.is_symbolic()) {
      if (auto choice = gemm_alternative(e, program_)) {
        program_.steps.emplace_back(std::move(*choice));
        return;
      }
    }
    program_.steps.emplace_back(std::move(e));
  }

  const graph::Graph& graph_;
  LoweringOptions options_;
  Program program_;
  std::vector<Storage> storages_;
  std::map<ValueKey, Lowered> lowered_;
  std::map<ValueKey, int> value_reads_;
};

}  // namespace

bool generates_loops(const ops::OpDef& op) {
  const ops::OpDef& f = op.functional != nullptr ? *op.functional : op;
  return f.kind == ops::OpKind::View || Lowering::has_loops(f.full_name());
}

Program lower(const graph::Graph& graph, const LoweringOptions& options) {
  return Lowering(graph, options).run();
}

}  // namespace kiln::inductor
