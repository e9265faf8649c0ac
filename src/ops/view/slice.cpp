// slice, narrow, select, unbind, split, split_with_sizes, chunk: views of a range along one dim.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/view.h>

#include <limits>

namespace kiln::ops {

using namespace view_detail;

namespace {

// The dim a one-dim op works on; 0-dim tensors have none (PyTorch raises IndexError too).
int64_t sliced_dim(const Tensor& self, int64_t dim, const char* op) {
  KILN_CHECK_T(IndexError, self.dim() > 0, "{}: cannot be applied to a 0-dim tensor", op);
  return wrap_dim(dim, self.dim(), op);
}

SymInt sym_dim_size(const Tensor& self, int64_t dim) {
  return self.sym_sizes()[static_cast<size_t>(dim)];
}

// slice.Tensor's arguments, checked, with its bounds clamped as Python clamps them.
struct SliceBounds {
  int64_t dim;
  SymInt start, end, step, size;
};

SliceBounds slice_bounds(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  SliceBounds b;
  b.dim = sliced_dim(self, args[1].to_int(), "slice");
  b.step = args[4].to_sym_int();
  KILN_CHECK(b.step > 0, "slice: step must be positive, got {}", b.step.str());
  b.size = sym_dim_size(self, b.dim);
  b.start = args[2].is_none() ? SymInt(int64_t{0}) : args[2].to_sym_int();
  b.end = args[3].is_none() ? SymInt(std::numeric_limits<int64_t>::max()) : args[3].to_sym_int();
  // Negative bounds count from the end, then both clamp into [0, size].
  if (b.start < 0) b.start = b.start + b.size;
  if (b.end < 0) b.end = b.end + b.size;
  if (b.start < 0) b.start = 0;
  if (b.start > b.size) b.start = b.size;
  if (b.end < b.start) b.end = b.start;
  if (b.end > b.size) b.end = b.size;
  return b;
}

std::vector<TensorMeta> slice_op_meta(const Stack& args) {
  const SliceBounds b = slice_bounds(args);
  return {slice_meta(args[0].to_tensor(), b.dim, b.start, b.end, b.step)};
}

// slice_backward: the gradient placed in the sliced range of zeros. With step 1 a constant
// padding of the gradient (no write into a view, so symbolic bounds trace as they are).
std::vector<Tensor> slice_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& g = a.grad_outputs[0];
  const SliceBounds b = slice_bounds(a.inputs);
  if (b.step == 1) {
    static const OpDef& pad = OpRegistry::instance().get("constant_pad_nd");
    // constant_pad_nd's list pairs (before, after) from the last dim backwards.
    std::vector<SymInt> widths(2 * static_cast<size_t>(self.dim() - b.dim), SymInt(int64_t{0}));
    widths[widths.size() - 2] = b.start;
    widths[widths.size() - 1] = b.size - b.end;
    return {call1(pad, {g, widths, Scalar(0)})};
  }
  Tensor grad = zeros(self.sizes(), g.options());
  grad.slice(b.dim, b.start.expect_int(), b.end.expect_int(), b.step.expect_int()).copy_(g);
  return {grad};
}

std::vector<Tensor> narrow_composite(const Stack& args) {
  static const OpDef& slice = OpRegistry::instance().get("slice.Tensor");
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = sliced_dim(self, args[1].to_int(), "narrow");
  SymInt start = args[2].to_sym_int();
  const SymInt length = args[3].to_sym_int();
  const SymInt size = sym_dim_size(self, dim);
  KILN_CHECK(length >= 0, "narrow: length must be non-negative, got {}", length.str());
  // start == size is allowed (an empty narrow at the end); otherwise it must index the dim.
  if (start != size) {
    KILN_CHECK_T(IndexError, start >= -size && start < size,
                 "narrow: start ({}) out of range for dimension {} of size {}", start.str(), dim,
                 size.str());
    if (start < 0) start = start + size;
  }
  KILN_CHECK(start <= size - length,
             "narrow: start ({}) + length ({}) exceeds dimension size ({}) at dimension {}",
             start.str(), length.str(), size.str(), dim);
  return call(slice, {self, dim, start, start + length, SymInt(int64_t{1})});
}

// select's dim and index (wrapped), checked as PyTorch checks them.
std::pair<int64_t, SymInt> select_dim_and_index(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = sliced_dim(self, args[1].to_int(), "select");
  SymInt index = args[2].to_sym_int();
  const SymInt size = sym_dim_size(self, dim);
  KILN_CHECK_T(IndexError, index >= -size && index < size,
               "select(): index {} out of range for tensor of size {} at dimension {}", index.str(),
               shape_str(self.sym_sizes()), dim);
  if (index < 0) index = index + size;
  return {dim, index};
}

std::vector<TensorMeta> select_op_meta(const Stack& args) {
  const auto [dim, index] = select_dim_and_index(args);
  return {select_meta(args[0].to_tensor(), dim, index)};
}

std::vector<TensorMeta> unbind_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = sliced_dim(self, args[1].to_int(), "unbind");
  const int64_t n = guarded_int(sym_dim_size(self, dim), "unbind");
  std::vector<TensorMeta> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(select_meta(self, dim, i));
  return out;
}

std::vector<TensorMeta> split_with_sizes_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  SymDimVector split_sizes = args[1].to_sym_int_list();
  const int64_t dim = sliced_dim(self, args[2].to_int(), "split_with_sizes");
  const SymInt size = sym_dim_size(self, dim);
  std::vector<TensorMeta> out;
  out.reserve(split_sizes.size());
  SymInt start = 0;
  for (const SymInt& length : split_sizes) {
    KILN_CHECK(length >= 0,
               "split_with_sizes: expects split_sizes to have only non-negative entries, but got "
               "split_sizes={}",
               shape_str(split_sizes));
    out.push_back(slice_meta(self, dim, start, start + length, 1));
    start = start + length;
  }
  KILN_CHECK(start == size,
             "split_with_sizes: expects split_sizes to sum exactly to {} (input tensor's size at "
             "dimension {}), but got split_sizes={}",
             size.str(), dim, shape_str(split_sizes));
  return out;
}

const OpDef& split_with_sizes_op() {
  static const OpDef& op = OpRegistry::instance().get("split_with_sizes");
  return op;
}

// Equal pieces of split_size along dim, the last one smaller if the size doesn't divide.
SymDimVector split_sizes_for(const SymInt& size, const SymInt& split_size) {
  // split_size 0 is allowed only for an empty dim: one empty piece, as PyTorch.
  int64_t count = 1;
  if (split_size != 0) {
    count = std::max<int64_t>(guarded_int((size + split_size - 1) / split_size, "split"), 1);
  }
  SymDimVector sizes(static_cast<size_t>(count), split_size);
  sizes.back() = size - split_size * (count - 1);
  return sizes;
}

std::vector<Tensor> split_composite(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const SymInt split_size = args[1].to_sym_int();
  const int64_t dim = sliced_dim(self, args[2].to_int(), "split");
  const SymInt size = sym_dim_size(self, dim);
  KILN_CHECK(split_size >= 0, "split: expects split_size be non-negative, but got split_size={}",
             split_size.str());
  KILN_CHECK(split_size > 0 || size == 0,
             "split: split_size can only be 0 if dimension size is 0, but got dimension size of {}",
             size.str());
  return call(split_with_sizes_op(), {self, split_sizes_for(size, split_size), dim});
}

std::vector<Tensor> chunk_composite(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t chunks = args[1].to_int();
  const int64_t dim = sliced_dim(self, args[2].to_int(), "chunk");
  KILN_CHECK(chunks > 0, "chunk: expects `chunks` to be greater than 0, got: {}", chunks);
  const SymInt size = sym_dim_size(self, dim);
  const SymInt split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` empty pieces (split would give one).
  if (split_size == 0 && size == 0) {
    return call(split_with_sizes_op(),
                {self, SymDimVector(static_cast<size_t>(chunks), SymInt(int64_t{0})), dim});
  }
  return call(split_with_sizes_op(), {self, split_sizes_for(size, split_size), dim});
}

using IV = std::vector<int64_t>;

// ---- decompositions: slices (slice.Tensor) with the selected dim dropped (squeeze.dims) ----

const OpDef& slice_op() {
  static const OpDef& op = OpRegistry::instance().get("slice.Tensor");
  return op;
}

// self.select(dim, index) for a wrapped dim and an index in [0, size).
Tensor select_as_slice(const Tensor& self, int64_t dim, const SymInt& index) {
  static const OpDef& squeeze_dims = OpRegistry::instance().get("squeeze.dims");
  const Tensor row = call1(slice_op(), {self, dim, index, index + 1, SymInt(int64_t{1})});
  return call1(squeeze_dims, {row, IV{dim}});
}

std::vector<Tensor> select_decomposition(const Stack& args) {
  const auto [dim, index] = select_dim_and_index(args);
  return {select_as_slice(args[0].to_tensor(), dim, index)};
}

std::vector<Tensor> unbind_decomposition(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = sliced_dim(self, args[1].to_int(), "unbind");
  const int64_t n = guarded_int(sym_dim_size(self, dim), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(select_as_slice(self, dim, SymInt(i)));
  return out;
}

std::vector<Tensor> split_with_sizes_decomposition(const Stack& args) {
  split_with_sizes_meta(args);  // the size checks
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = sliced_dim(self, args[2].to_int(), "split_with_sizes");
  std::vector<Tensor> out;
  SymInt start = 0;
  for (const SymInt& length : args[1].to_sym_int_list()) {
    out.push_back(call1(slice_op(), {self, dim, start, start + length, SymInt(int64_t{1})}));
    start = start + length;
  }
  return out;
}

}  // namespace

KILN_OP(
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor(a)")
    .view(slice_op_meta)
    .derivative(slice_derivative, DerivativeReads::Nothing)
    .samples([] {
      using std::nullopt;
      auto i = [](int64_t v) { return IValue(v); };
      return std::vector<Sample>{
          {{make_sample({5, 4}, kFloat32), i(0), i(1), i(4)}, "rows"},
          {{make_sample({5, 6}, kFloat32), i(1), i(-5), nullopt, i(2)}, "negative start, step"},
          {{make_sample({5, 4}, kFloat64), i(-1), i(-100), i(100)}, "clamped bounds"},
          {{make_noncontiguous_sample({4, 5}, kInt64), i(1), i(1), i(-1), i(3)}, "non-contiguous"},
          {{make_sample({5}, kFloat32), i(0), i(3), i(1)}, "end before start: empty"},
          {{make_sample({0, 3}, kFloat32), i(0), i(0), i(2)}, "empty"},
      };
    });

KILN_OP("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
    .composite(narrow_composite)
    .samples([] {
      auto i = [](int64_t v) { return IValue(v); };
      return std::vector<Sample>{
          {{make_sample({5, 4}, kFloat32), i(0), i(1), i(3)}, "rows"},
          {{make_sample({5, 4}, kFloat32), i(-1), i(-3), i(2)}, "negative dim and start"},
          {{make_noncontiguous_sample({4, 6}, kFloat64), i(1), i(2), i(4)}, "non-contiguous"},
          {{make_sample({5, 4}, kInt32), i(0), i(5), i(0)}, "empty at the end"},
      };
    });

KILN_OP("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The gradient as a slice of width 1, padded with zeros to self's size along dim: no
          // write into a view, so that symbolic sizes trace (as slice's derivative).
          static const OpDef& pad = OpRegistry::instance().get("constant_pad_nd");
          const Tensor& self = a.inputs[0].to_tensor();
          const int64_t dim = sliced_dim(self, a.inputs[1].to_int(), "select");
          const SymInt size = sym_dim_size(self, dim);
          SymInt index = a.inputs[2].to_sym_int();
          if (index < 0) index = index + size;
          std::vector<SymInt> widths(2 * static_cast<size_t>(self.dim() - dim), SymInt(int64_t{0}));
          widths[widths.size() - 2] = index;
          widths[widths.size() - 1] = size - index - 1;
          return {call1(pad, {a.grad_outputs[0].unsqueeze(dim), widths, Scalar(0)})};
        },
        DerivativeReads::Nothing)
    .view(select_op_meta)
    .decomposition(select_decomposition)
    .samples([] {
      auto i = [](int64_t v) { return IValue(v); };
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), i(0), i(1)}, "row"},
          {{make_sample({3, 4}, kFloat32), i(1), i(-1)}, "negative index"},
          {{make_sample({2, 3, 4}, kFloat64), i(-2), i(2)}, "negative dim"},
          {{make_noncontiguous_sample({3, 4}, kInt64), i(1), i(3)}, "non-contiguous"},
          {{make_sample({4}, kFloat32), i(0), i(2)}, "to 0-dim"},
          {{make_sample({3, 0}, kFloat32), i(0), i(2)}, "empty"},
      };
    });

KILN_OP("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
    .view(unbind_meta)
    .decomposition(unbind_decomposition)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The pieces' gradients stacked back along dim.
          const Tensor& self = a.inputs[0].to_tensor();
          if (a.grad_outputs.empty()) return {zeros(self.sizes(), self.options())};
          return {stack(a.grad_outputs, a.inputs[1].to_int())};
        },
        DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32)}, "rows"},
          {{make_sample({2, 3, 4}, kFloat64), int64_t{-1}}, "last dim"},
          {{make_noncontiguous_sample({2, 3}, kInt32), int64_t{1}}, "non-contiguous"},
          {{make_sample({2, 0}, kFloat32)}, "empty"},
      };
    });

KILN_OP("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]")
    .view(split_with_sizes_meta)
    .decomposition(split_with_sizes_decomposition)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The pieces' gradients joined back along dim.
          return {cat(a.grad_outputs, a.inputs[2].to_int())};
        },
        DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({6, 4}, kFloat32), IV{1, 2, 3}}, "rows"},
          {{make_sample({3, 5}, kFloat64), IV{2, 0, 3}, int64_t{-1}}, "with an empty piece"},
          {{make_noncontiguous_sample({3, 4}, kInt64), IV{3, 1}, int64_t{1}}, "non-contiguous"},
      };
    });

KILN_OP("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
    .composite(split_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({7, 3}, kFloat32), int64_t{3}}, "uneven"},
          {{make_sample({3, 8}, kFloat32), int64_t{4}, int64_t{-1}}, "even, last dim"},
          {{make_sample({3, 2}, kFloat64), int64_t{5}}, "larger than the dim"},
          {{make_noncontiguous_sample({3, 5}, kInt32), int64_t{2}, int64_t{1}}, "non-contiguous"},
          {{make_sample({0, 2}, kFloat32), int64_t{0}}, "empty, split_size 0"},
      };
    });

KILN_OP("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]")
    .composite(chunk_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({7, 2}, kFloat32), int64_t{3}}, "uneven"},
          {{make_sample({2, 6}, kFloat32), int64_t{4}, int64_t{1}}, "fewer chunks than asked"},
          {{make_noncontiguous_sample({4, 4}, kFloat64), int64_t{2}, int64_t{-1}},
           "non-contiguous"},
          {{make_sample({0, 3}, kFloat32), int64_t{3}}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("slice.Tensor");
  return ops::call1(op, {self, dim, start, end, step}, &loc);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length,
              const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("narrow");
  return ops::call1(op, {self, dim, start, length}, &loc);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("select.int");
  return ops::call1(op, {self, dim, index}, &loc);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("unbind.int");
  return ops::call(op, {self, dim}, &loc);
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim,
                          const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("split.Tensor");
  return ops::call(op, {self, split_size, dim}, &loc);
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntList split_sizes, int64_t dim,
                                     const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("split_with_sizes");
  return ops::call(op, {self, split_sizes, dim}, &loc);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim,
                          const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("chunk");
  return ops::call(op, {self, chunks, dim}, &loc);
}

}  // namespace kiln
