// gather, scatter (src, value, reduce) and scatter_add: element-wise indexing along one dim,
// where an index tensor of the same rank names, for each of its positions, the position along
// `dim` to read from (gather) or write to (scatter).
#include "ops/indexing/index_common.h"
#include "ops/indexing/index_grad.h"
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace indexing;

std::vector<TensorMeta> gather_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& index = args[2].to_tensor();
  check_index_dtype(index, /*allow_int32=*/false, "gather");
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "gather");
  KILN_CHECK(nonempty_dim(index) == nonempty_dim(self),
             "gather(): Index tensor must have the same number of dimensions as input tensor "
             "(index {}, input {})",
             sizes_of(index), sizes_of(self));
  for (int64_t d = 0; d < nonempty_dim(self); ++d) {
    if (d == dim) continue;
    KILN_CHECK(nonempty_size(index, d) <= nonempty_size(self, d),
               "gather(): Size does not match at dimension {} expected index {} to be no larger "
               "than self {} apart from dimension {}",
               d, sizes_of(index), sizes_of(self), dim);
  }
  return {TensorMeta::contiguous(index.sym_sizes().vec(), self.dtype(), self.device())};
}

// Strides of t with the one along dim set to 0: the offset of the row an index walks along.
DimVector strides_without(const Tensor& t, int64_t dim) {
  DimVector s(t.strides().begin(), t.strides().end());
  s[static_cast<size_t>(dim)] = 0;
  return s;
}

void gather_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor self = at_least_1d(args[0].to_tensor());
  const Tensor index = at_least_1d(args[2].to_tensor());
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "gather");
  Tensor target = strided::dense_target(outs[0], self.dtype());
  const Tensor target1 = at_least_1d(target);
  const int64_t size = self.size(dim), stride = self.stride(dim);
  const int64_t* idx = index.data_ptr<int64_t>();
  const DimVector self_strides = strides_without(self, dim);
  const int64_t last = index.dim() - 1;
  const int64_t os = target1.stride(last), is = index.stride(last),
                ss = self_strides[static_cast<size_t>(last)];
  strided::dispatch_by_size(self.itemsize(), [&]<typename E>() {
    E* out = static_cast<E*>(target1.data_ptr());
    const E* in = static_cast<const E*>(self.data_ptr());
    // Rows of the last dim: out[j] = in[j * ss + index[j] * stride] (ss is 0 when dim is last).
    strided::for_each_row_parallel<3>(index.sizes(),
                                      {target1.strides(), index.strides(), IntList(self_strides)},
                                      [&](const std::array<int64_t, 3>& off, int64_t n) {
                                        E* o = out + off[0];
                                        const int64_t* ix = idx + off[1];
                                        const E* row = in + off[2];
                                        for (int64_t j = 0; j < n; ++j) {
                                          const int64_t v = ix[j * is];
                                          check_in_bounds(v, dim, size, "gather");
                                          o[j * os] = row[j * ss + v * stride];
                                        }
                                      });
  });
  strided::commit(outs[0], target);
}

enum class ScatterMode { Assign, Add, Multiply };

ScatterMode parse_reduce(const std::string& reduce) {
  if (reduce == "add") return ScatterMode::Add;
  if (reduce == "multiply") return ScatterMode::Multiply;
  KILN_FAIL("scatter(): reduce argument must be either add or multiply, got '{}'", reduce);
}

// Scatters into target (contiguous, self's dtype, already holding self's values).
void scatter_into(const Tensor& target0, int64_t raw_dim, const Tensor& index0, const Tensor& src0,
                  const Scalar& value, ScatterMode mode, const char* op) {
  if (index0.numel() == 0) return;
  const Tensor target = at_least_1d(target0);
  const Tensor index = at_least_1d(index0);
  const Tensor src = src0.defined() ? at_least_1d(src0) : Tensor();
  const int64_t dim = wrap_dim(raw_dim, target.dim(), op);
  const int64_t size = target.size(dim), stride = target.stride(dim);
  const int64_t* idx = index.data_ptr<int64_t>();
  const DimVector target_strides = strides_without(target, dim);
  // A value overload reads the same element for every position (stride 0 everywhere).
  const DimVector src_strides = src.defined()
                                    ? DimVector(src.strides().begin(), src.strides().end())
                                    : DimVector(static_cast<size_t>(index.dim()), 0);
  KILN_DISPATCH_ALL(target.dtype(), op, [&]<typename T>() {
    using acc_t = opmath_t<T>;
    T* out = target.data_ptr<T>();
    const T fill = value.to<T>();
    const T* in = src.defined() ? src.data_ptr<T>() : &fill;
    strided::for_each<3>(
        index.sizes(), {target_strides, index.strides(), src_strides},
        [&](const std::array<int64_t, 3>& off) {
          const int64_t v = idx[off[1]];
          check_in_bounds(v, dim, size, op);
          T& dst = out[off[0] + v * stride];
          const T s = in[off[2]];
          switch (mode) {
            case ScatterMode::Assign:
              dst = s;
              break;
            case ScatterMode::Add:
              dst = static_cast<T>(static_cast<acc_t>(dst) + static_cast<acc_t>(s));
              break;
            case ScatterMode::Multiply:
              dst = static_cast<T>(static_cast<acc_t>(dst) * static_cast<acc_t>(s));
              break;
          }
        });
  });
}

// Runs one scatter overload: out = self with src (or value) scattered in.
void scatter_run(const Stack& args, const Tensor& out, const Tensor& src, const Scalar& value,
                 ScatterMode mode, const char* op) {
  const Tensor& self = args[0].to_tensor();
  Tensor target = strided::dense_target(out, self.dtype());
  if (!target.is_same(self)) target.copy_(self);
  scatter_into(target, args[1].to_int(), args[2].to_tensor(), src, value, mode, op);
  strided::commit(out, target);
}

std::vector<TensorMeta> self_like(const Tensor& self) {
  return {TensorMeta::contiguous(self.sym_sizes().vec(), self.dtype(), self.device())};
}

template <bool HasSrc>
std::vector<TensorMeta> scatter_meta(const Stack& args, const char* op) {
  const Tensor& self = args[0].to_tensor();
  check_scatter(self, args[1].to_int(), args[2].to_tensor(),
                HasSrc ? args[3].to_tensor() : Tensor(), op);
  return self_like(self);
}

// ---- decompositions: scatter.src and scatter_reduce.two (a value is a src of index's shape) ----

Tensor value_src(const Stack& args) {
  return full(args[2].to_tensor().sizes(), args[3].to_scalar(), args[0].to_tensor().options());
}

// scatter's add/multiply are scatter_reduce's sum/prod, self included.
Tensor scatter_reduce_as_prim(const Stack& args, const Tensor& src, ScatterMode mode) {
  return call1(
      op_named("scatter_reduce.two"),
      {args[0], args[1], args[2], src, IValue(mode == ScatterMode::Add ? "sum" : "prod"), true});
}

std::vector<Tensor> scatter_value_decomposition(const Stack& args) {
  scatter_meta<false>(args, "scatter");
  return call(op_named("scatter.src"), {args[0], args[1], args[2], value_src(args)});
}

std::vector<Tensor> scatter_reduce_decomposition(const Stack& args) {
  const ScatterMode mode = parse_reduce(args[4].to_string());
  scatter_meta<true>(args, "scatter");
  return {scatter_reduce_as_prim(args, args[3].to_tensor(), mode)};
}

std::vector<Tensor> scatter_value_reduce_decomposition(const Stack& args) {
  const ScatterMode mode = parse_reduce(args[4].to_string());
  scatter_meta<false>(args, "scatter");
  return {scatter_reduce_as_prim(args, value_src(args), mode)};
}

std::vector<Tensor> scatter_add_decomposition(const Stack& args) {
  scatter_meta<true>(args, "scatter_add");
  return {scatter_reduce_as_prim(args, args[3].to_tensor(), ScatterMode::Add)};
}

Tensor index_tensor(std::vector<int64_t> values, IntList shape) {
  return from_vector(values, shape);
}

// Indices unique along dim 0 within each column (scatter with duplicates is nondeterministic).
std::vector<Sample> scatter_src_samples(const Stack& extra = {}) {
  std::vector<Sample> s{
      {{make_sample({4, 3}, kFloat32), 0, index_tensor({3, 0, 1, 1, 2, 0}, {2, 3}),
        make_sample({2, 3}, kFloat32, -3, 3, 1)},
       "dim 0"},
      {{make_sample({3, 4}, kFloat64), 1, index_tensor({3, 1, 0, 2}, {2, 2}),
        make_sample({3, 3}, kFloat64, -3, 3, 1)},
       "dim 1, src larger than index"},
      {{make_noncontiguous_sample({3, 4}, kInt64), -1, index_tensor({2, 0, 1, 3, 0, 1}, {3, 2}),
        make_noncontiguous_sample({3, 2}, kInt64, -3, 3, 1)},
       "non-contiguous"},
      {{make_sample({}, kFloat32), 0, index_tensor({0}, {}), make_sample({}, kFloat32, -3, 3, 1)},
       "0-dim"},
      {{make_sample({3, 2}, kFloat32), 0, index_tensor({}, {0, 2}), make_sample({1, 2}, kFloat32)},
       "empty index"},
  };
  for (Sample& x : s) x.args.insert(x.args.end(), extra.begin(), extra.end());
  return s;
}

// ---------------------------------------------------------------- derivatives

int64_t dim_arg(const BackwardArgs& a) { return a.inputs[1].to_int(); }
const Tensor& index_arg(const BackwardArgs& a) { return a.inputs[2].to_tensor(); }

// src's gradient: grad read back at the positions src was scattered to; src elements beyond the
// index's shape were never read and get zeros.
Tensor src_grad(const BackwardArgs& a) {
  const Tensor& src = a.inputs[3].to_tensor();
  return zero_pad_to(a.grad_outputs[0].gather(dim_arg(a), index_arg(a)), src.sizes());
}

// self's gradient where src overwrote: zero at every written position.
Tensor overwritten_self_grad(const BackwardArgs& a) {
  return a.grad_outputs[0].scatter(dim_arg(a), index_arg(a), Scalar(0.0));
}

std::vector<Tensor> gather_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& g = a.grad_outputs[0];
  // Every read position gets the gradients of its reads (duplicates accumulate).
  return {zeros(self.sizes(), g.options()).scatter_add(dim_arg(a), index_arg(a), g), Tensor()};
}

std::vector<Tensor> scatter_src_derivative(const BackwardArgs& a) {
  return {overwritten_self_grad(a), Tensor(), src_grad(a)};
}

std::vector<Tensor> scatter_reduce_derivative(const BackwardArgs& a) {
  if (a.inputs[4].to_string() == "add") return {a.grad_outputs[0], Tensor(), src_grad(a)};
  // multiply: self times the product of its src values, as scatter_reduce's "prod".
  const Tensor& index = index_arg(a);
  const Tensor& src = a.inputs[3].to_tensor();
  std::pair<Tensor, Tensor> grads =
      scatter_reduce_backward(a.grad_outputs[0], a.inputs[0].to_tensor(), dim_arg(a), index,
                              front_of(src, index), "prod", /*include_self=*/true, a.outputs[0]);
  return {grads.first, Tensor(), zero_pad_to(grads.second, src.sizes())};
}

std::vector<Tensor> scatter_value_reduce_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  if (a.inputs[4].to_string() == "add") return {g, Tensor()};
  // multiply: each position was multiplied by value once per index naming it.
  return {kiln::scatter(g, dim_arg(a), index_arg(a), a.inputs[3].to_scalar(), "multiply"),
          Tensor()};
}

}  // namespace

KILN_OP("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor")
    .meta(gather_meta)
    .cpu(gather_impl)
    .derivative(gather_derivative)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), 1, make_sample({3, 5}, kInt64, 0, 4)}, "dim 1"},
          {{make_sample({4, 3}, kFloat64), 0, make_sample({2, 2}, kInt64, 0, 4)}, "smaller index"},
          {{make_noncontiguous_sample({4, 3}, kInt32), -2,
            make_noncontiguous_sample({3, 3}, kInt64, 0, 4)},
           "non-contiguous self and index"},
          {{make_sample({}, kFloat32), 0, index_tensor({0}, {})}, "0-dim"},
          {{make_sample({3, 4}, kFloat32), 1, index_tensor({}, {3, 0})}, "empty index"},
          {{make_sample({5}, kBool), 0, make_sample({7}, kInt64, 0, 5)}, "bool"},
      };
    });

[[maybe_unused]] static const OpDef& scatter_src_op = declare(
    OpBuilder("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
        .meta([](const Stack& a) { return scatter_meta<true>(a, "scatter"); })
        .cpu([](const Stack& a, const std::vector<Tensor>& outs) {
          scatter_run(a, outs[0], a[3].to_tensor(), Scalar(0), ScatterMode::Assign, "scatter");
        })
        .derivative(scatter_src_derivative)
        .inplace_variant()
        .samples([] { return scatter_src_samples(); })
        .out_variant());

[[maybe_unused]] static const OpDef& scatter_value_op = declare(
    OpBuilder("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor")
        .meta([](const Stack& a) { return scatter_meta<false>(a, "scatter"); })
        .cpu([](const Stack& a, const std::vector<Tensor>& outs) {
          scatter_run(a, outs[0], Tensor(), a[3].to_scalar(), ScatterMode::Assign, "scatter");
        })
        .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
          return {overwritten_self_grad(a), Tensor()};
        })
        .decomposition(scatter_value_decomposition)
        .inplace_variant()
        .samples([] {
          return std::vector<Sample>{
              {{make_sample({4, 3}, kFloat32), 0, make_sample({2, 3}, kInt64, 0, 4), Scalar(1.5)},
               "float value"},
              {{make_noncontiguous_sample({3, 4}, kInt64), 1, make_sample({3, 2}, kInt64, 0, 4),
                Scalar(int64_t{-7})},
               "int value, non-contiguous"},
              {{make_sample({}, kFloat64), 0, index_tensor({0}, {}), Scalar(2.0)}, "0-dim"},
          };
        })
        .out_variant());

[[maybe_unused]] static const OpDef& scatter_reduce_op = declare(
    OpBuilder(
        "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor")
        .meta([](const Stack& a) {
          parse_reduce(a[4].to_string());
          return scatter_meta<true>(a, "scatter");
        })
        .cpu([](const Stack& a, const std::vector<Tensor>& outs) {
          scatter_run(a, outs[0], a[3].to_tensor(), Scalar(0), parse_reduce(a[4].to_string()),
                      "scatter");
        })
        .derivative(scatter_reduce_derivative, DerivativeReads::InputsAndOutputs)
        .decomposition(scatter_reduce_decomposition)
        .inplace_variant()
        .samples([] {
          std::vector<Sample> s = scatter_src_samples({IValue("add")});
          for (Sample& x : scatter_src_samples({IValue("multiply")})) s.push_back(std::move(x));
          s.push_back({{make_sample({4, 3}, kFloat64), 0, index_tensor({1, 1, 0, 1, 1, 0}, {2, 3}),
                        make_sample({2, 3}, kFloat64, -3, 3, 1), IValue("add")},
                       "duplicate indices, add"});
          return s;
        })
        .out_variant());

[[maybe_unused]] static const OpDef& scatter_value_reduce_op = declare(
    OpBuilder("scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str "
              "reduce) -> Tensor")
        .meta([](const Stack& a) {
          parse_reduce(a[4].to_string());
          return scatter_meta<false>(a, "scatter");
        })
        .cpu([](const Stack& a, const std::vector<Tensor>& outs) {
          scatter_run(a, outs[0], Tensor(), a[3].to_scalar(), parse_reduce(a[4].to_string()),
                      "scatter");
        })
        .derivative(scatter_value_reduce_derivative)
        .decomposition(scatter_value_reduce_decomposition)
        .inplace_variant()
        .samples([] {
          return std::vector<Sample>{
              {{make_sample({4, 3}, kFloat32), 0, make_sample({5, 3}, kInt64, 0, 4), Scalar(1.5),
                IValue("add")},
               "add, duplicates"},
              {{make_noncontiguous_sample({3, 4}, kFloat64), 1, make_sample({3, 2}, kInt64, 0, 4),
                Scalar(-2.0), IValue("multiply")},
               "multiply, non-contiguous"},
              {{make_sample({5}, kInt64), 0, make_sample({3}, kInt64, 0, 5), Scalar(int64_t{3}),
                IValue("add")},
               "int64"},
          };
        })
        .out_variant());

KILN_OP("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
    .meta([](const Stack& a) { return scatter_meta<true>(a, "scatter_add"); })
    .cpu([](const Stack& a, const std::vector<Tensor>& outs) {
      scatter_run(a, outs[0], a[3].to_tensor(), Scalar(0), ScatterMode::Add, "scatter_add");
    })
    .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
      return {a.grad_outputs[0], Tensor(), src_grad(a)};
    })
    .decomposition(scatter_add_decomposition)
    .inplace_variant()
    .out_variant()
    .samples([] {
      std::vector<Sample> s = scatter_src_samples();
      s.push_back({{make_sample({3, 4}, kFloat64), 1, make_sample({3, 6}, kInt64, 0, 4),
                    make_sample({3, 6}, kFloat64, -3, 3, 1)},
                   "duplicate indices"});
      s.push_back({{make_sample({5}, kInt32), 0, make_sample({8}, kInt64, 0, 5),
                    make_sample({8}, kInt32, -3, 3, 1)},
                   "int32, duplicates"});
      return s;
    });

}  // namespace kiln::ops

namespace kiln {

namespace {
using ops::op_named;
}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad,
              const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("gather");
  return ops::call1(op, {self, dim, index, sparse_grad}, &loc);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter.src");
  return ops::call1(op, {self, dim, index, src}, &loc);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter.value");
  return ops::call1(op, {self, dim, index, value}, &loc);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter.reduce");
  return ops::call1(op, {self, dim, index, src, reduce}, &loc);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter.value_reduce");
  return ops::call1(op, {self, dim, index, value, reduce}, &loc);
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter_.src");
  ops::call(op, {self, dim, index, src}, &loc);
  return self;
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter_.value");
  ops::call(op, {self, dim, index, value}, &loc);
  return self;
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter_add");
  return ops::call1(op, {self, dim, index, src}, &loc);
}
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = op_named("scatter_add_");
  ops::call(op, {self, dim, index, src}, &loc);
  return self;
}

}  // namespace kiln
