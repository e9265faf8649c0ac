// The upsampling ops' backward ops, with aten's schemas (upsample_nearest1d_backward, ...,
// upsample_bilinear2d_backward): each output gradient is added back to the input position(s) it
// was read from, times the blend weights of the linear modes. The kernel walks the (N, C) planes
// in parallel; the decomposition, written in index_put(accumulate=True), is what autograd
// differentiates (double backward) and what the kernel is checked against.
#include "ops/indexing/index_grad.h"
#include "ops/resample/upsample_common.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace upsample;
using IV = std::vector<int64_t>;

// (grad_output, output_size, input_size, [align_corners], scales...).
struct UpsampleBackwardArgs {
  const Tensor& grad;
  IV output_size;
  IV input_size;
  bool align_corners = false;
  Scales scales;

  UpsampleBackwardArgs(const Stack& a, const UpsampleKind& kind)
      : grad(a[0].to_tensor()), output_size(a[1].to_int_list()), input_size(a[2].to_int_list()) {
    const bool linear = kind.interp == Interp::Linear;
    if (linear) align_corners = a[3].to_bool();
    const size_t first = linear ? 4 : 3;
    for (int64_t d = 0; d < kind.dims; ++d) {
      scales.push_back(a[first + static_cast<size_t>(d)].to_optional_double());
    }
  }

  // The source table of spatial dim d (nearest modes: one source of weight 1).
  LinearTable table(const UpsampleKind& kind, int64_t d) const {
    const int64_t in = input_size[static_cast<size_t>(2 + d)];
    const int64_t out = output_size[static_cast<size_t>(d)];
    const std::optional<double> scale = scales[static_cast<size_t>(d)];
    if (kind.interp == Interp::Linear) {
      return linear_table_for(grad.dtype(), in, out, align_corners, scale);
    }
    LinearTable t;
    t.index0 = nearest_map(in, out, scale, kind.interp == Interp::NearestExact);
    t.index1 = t.index0;
    t.lambda0.assign(t.index0.size(), 1.0);
    t.lambda1.assign(t.index0.size(), 0.0);
    return t;
  }
};

std::vector<TensorMeta> upsample_backward_meta(const Stack& args, const UpsampleKind& kind,
                                               const std::string& op) {
  const UpsampleBackwardArgs b(args, kind);
  KILN_CHECK(static_cast<int64_t>(b.output_size.size()) == kind.dims &&
                 static_cast<int64_t>(b.input_size.size()) == kind.dims + 2,
             "{}: expected output_size of {} and input_size of {} entries, got {} and {}", op,
             kind.dims, kind.dims + 2, sizes_str(b.output_size), sizes_str(b.input_size));
  IV expected = {b.input_size[0], b.input_size[1]};
  expected.insert(expected.end(), b.output_size.begin(), b.output_size.end());
  KILN_CHECK(IntList(b.grad.sizes()) == IntList(expected),
             "{}: expected grad_output of sizes {} (input_size's batch and channels, then "
             "output_size), but got {}",
             op, sizes_str(expected), sizes_str(b.grad.sizes()));
  for (int64_t s : b.input_size) {
    KILN_CHECK(s >= 0, "{}: input_size {} has a negative entry", op, sizes_str(b.input_size));
  }
  KILN_CHECK_T(TypeError, is_floating_point(b.grad.dtype()),
               "{}: expected a floating point grad_output, but got {}", op,
               dtype_name(b.grad.dtype()));
  return {TensorMeta::contiguous(to_sym(b.input_size), b.grad.dtype(), b.grad.device())};
}

void upsample_backward_impl(const Stack& args, const Tensor& out, const UpsampleKind& kind) {
  const UpsampleBackwardArgs b(args, kind);
  Tensor target = out.is_contiguous() ? out : empty(out.sizes(), out.options());
  // 1-D ops are 2-D ops with a height of 1.
  LinearTable ht;
  ht.index0 = ht.index1 = {0};
  ht.lambda0 = {1.0};
  ht.lambda1 = {0.0};
  if (kind.dims == 2) ht = b.table(kind, 0);
  const LinearTable wt = b.table(kind, kind.dims - 1);
  const int64_t planes = b.input_size[0] * b.input_size[1];
  const int64_t ih = kind.dims == 2 ? b.input_size[2] : 1, iw = b.input_size.back();
  const int64_t oh = kind.dims == 2 ? b.output_size[0] : 1, ow = b.output_size.back();
  const bool nearest = kind.interp != Interp::Linear;
  const Tensor grad = b.grad.contiguous();
  KILN_DISPATCH_FLOATING(grad.dtype(), kind.name.c_str(), [&]<typename T>() {
    using acc_t = opmath_t<T>;
    const T* g = grad.data_ptr<T>();
    T* o = target.data_ptr<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oh * ow, 1));
    parallel_for(0, planes, grain, [&](int64_t first, int64_t last) {
      std::vector<acc_t> acc(static_cast<size_t>(ih * iw));
      for (int64_t p = first; p < last; ++p) {
        std::fill(acc.begin(), acc.end(), acc_t(0));
        const T* gp = g + p * oh * ow;
        for (int64_t y = 0; y < oh; ++y) {
          const auto uy = static_cast<size_t>(y);
          acc_t* r0 = acc.data() + ht.index0[uy] * iw;
          acc_t* r1 = acc.data() + ht.index1[uy] * iw;
          const auto h0 = static_cast<acc_t>(ht.lambda0[uy]);
          const auto h1 = static_cast<acc_t>(ht.lambda1[uy]);
          for (int64_t x = 0; x < ow; ++x) {
            const auto ux = static_cast<size_t>(x);
            const auto v = static_cast<acc_t>(gp[y * ow + x]);
            const int64_t x0 = wt.index0[ux], x1 = wt.index1[ux];
            if (nearest) {
              r0[x0] += v;
              continue;
            }
            const auto w0 = static_cast<acc_t>(wt.lambda0[ux]);
            const auto w1 = static_cast<acc_t>(wt.lambda1[ux]);
            r0[x0] += h0 * w0 * v;
            r0[x1] += h0 * w1 * v;
            r1[x0] += h1 * w0 * v;
            r1[x1] += h1 * w1 * v;
          }
        }
        T* op = o + p * ih * iw;
        for (int64_t i = 0; i < ih * iw; ++i) op[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
      }
    });
  });
  if (!target.is_same(out)) {
    Tensor dst = out;
    dst.copy_(target);
  }
}

// The same in kiln ops: along each spatial dim, index_put(accumulate=True) of the gradient
// times each source's weight (the tables as tensors: decompositions hold no host data).
std::vector<Tensor> upsample_backward_decomposition(const Stack& args, const UpsampleKind& kind) {
  upsample_backward_meta(args, kind, kind.name + "_backward");  // the op's checks
  const UpsampleBackwardArgs b(args, kind);
  Tensor g = b.grad;
  DimVector sizes(g.sizes().begin(), g.sizes().end());
  for (int64_t d = 0; d < kind.dims; ++d) {
    const int64_t dim = 2 + d, out = b.output_size[static_cast<size_t>(d)];
    const int64_t in = b.input_size[static_cast<size_t>(dim)];
    const std::optional<double> scale = b.scales[static_cast<size_t>(d)];
    sizes[static_cast<size_t>(dim)] = in;
    if (kind.interp != Interp::Linear) {
      const Tensor index =
          nearest_index(in, out, scale, kind.interp == Interp::NearestExact, g.device());
      g = indexing::index_add_into_zeros(g, dim, index, sizes);
      continue;
    }
    const LinearWeights w = linear_weights(g.dtype(), in, out, b.align_corners, scale, g.device());
    // The weights along dim, broadcast over the dims after it.
    IV shape(static_cast<size_t>(g.dim() - dim), 1);
    shape[0] = out;
    g = indexing::index_add_into_zeros(g * w.lambda0.to(g.dtype()).view(shape), dim, w.index0,
                                       sizes) +
        indexing::index_add_into_zeros(g * w.lambda1.to(g.dtype()).view(shape), dim, w.index1,
                                       sizes);
  }
  return {g};
}

std::vector<Sample> upsample_backward_samples(const UpsampleKind& kind) {
  const bool linear = kind.interp == Interp::Linear;
  auto args = [&](IV in, IV out, bool align, std::optional<double> scale, DType dtype) {
    IV gsize = {in[0], in[1]};
    gsize.insert(gsize.end(), out.begin(), out.end());
    Stack a{make_sample(gsize, dtype), out, in};
    if (linear) a.emplace_back(align);
    for (int64_t d = 0; d < kind.dims; ++d) a.emplace_back(scale);
    return a;
  };
  if (kind.dims == 1) {
    Stack wrong_grad = args({2, 3, 5}, {9}, false, std::nullopt, kFloat32);
    wrong_grad[0] = make_sample({2, 3, 8}, kFloat32);
    return {
        {args({2, 3, 5}, {9}, false, std::nullopt, kFloat32), "upsample"},
        {args({2, 3, 8}, {5}, true, std::nullopt, kFloat64), "downsample"},
        {args({1, 2, 4}, {10}, false, 2.5, kFloat32), "explicit scale"},
        {args({2, 2, 6}, {12}, true, std::nullopt, kFloat64), "2x"},
        {args({0, 2, 4}, {7}, false, std::nullopt, kFloat32), "empty batch"},
        {wrong_grad, "grad_output of the wrong size (raises)"},
    };
  }
  return {
      {args({2, 3, 4, 5}, {7, 9}, false, std::nullopt, kFloat32), "upsample"},
      {args({1, 2, 8, 6}, {3, 4}, true, std::nullopt, kFloat64), "downsample"},
      {args({1, 2, 3, 4}, {7, 10}, false, 2.5, kFloat32), "explicit scales"},
      {args({2, 4, 3, 5}, {6, 11}, true, std::nullopt, kFloat64), "align_corners"},
      {args({0, 2, 3, 3}, {5, 5}, false, std::nullopt, kFloat32), "empty batch"},
  };
}

void declare_upsample_backward(const UpsampleKind& kind) {
  const bool linear = kind.interp == Interp::Linear;
  const std::string name = kind.name + "_backward";
  const std::string scales =
      kind.dims == 1 ? "float? scales=None" : "float? scales_h=None, float? scales_w=None";
  declare(OpBuilder(fmt::format("{}(Tensor grad_output, SymInt[{}] output_size, SymInt[{}] "
                                "input_size, {}{}) -> Tensor",
                                name, kind.dims, kind.dims + 2,
                                linear ? "bool align_corners, " : "", scales))
              .meta([kind, name](const Stack& a) { return upsample_backward_meta(a, kind, name); })
              .cpu([kind](const Stack& a, const std::vector<Tensor>& outs) {
                upsample_backward_impl(a, outs[0], kind);
              })
              .decomposition(
                  [kind](const Stack& a) { return upsample_backward_decomposition(a, kind); })
              .samples([kind] { return upsample_backward_samples(kind); }));
}

KILN_REGISTER_OPS(upsample_backward) {
  declare_upsample_backward({Interp::Nearest, 1, "upsample_nearest1d"});
  declare_upsample_backward({Interp::Nearest, 2, "upsample_nearest2d"});
  declare_upsample_backward({Interp::NearestExact, 1, "_upsample_nearest_exact1d"});
  declare_upsample_backward({Interp::NearestExact, 2, "_upsample_nearest_exact2d"});
  declare_upsample_backward({Interp::Linear, 1, "upsample_linear1d"});
  declare_upsample_backward({Interp::Linear, 2, "upsample_bilinear2d"});
}

}  // namespace
}  // namespace kiln::ops
