// Upsampling ops: upsample_nearest1d/2d, _upsample_nearest_exact1d/2d, upsample_linear1d and
// upsample_bilinear2d, each with aten's plain form (output_size plus optional per-dim scales) and
// its .vec form (output_size or scale_factors, as F.interpolate calls them). Nearest modes are a
// gather along each spatial dim (remap_copy); linear modes blend through per-dim weight tables
// (upsample.kernel.cpp). A channels-last 4-D input gives a channels-last output.
#include "ops/indexing/strided_loop.h"
#include "ops/resample/upsample_common.h"
#include "ops/resample/upsample_kernels.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/resample.h>

#include <cmath>

namespace kiln::ops {

cpu::KernelDispatch<LinearUpsampleKernel> linear_upsample_kernels;

namespace upsample {

// Source positions of nearest / nearest-exact upsampling (aten's nearest_idx and
// nearest_exact_idx, in float as aten computes them).
std::vector<int64_t> nearest_map(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  std::vector<int64_t> m(static_cast<size_t>(out));
  const float s = scale_value<float>(scale, in, out);
  for (int64_t j = 0; j < out; ++j) {
    int64_t i;
    if (!exact && out == in) {
      i = j;
    } else if (!exact && out == 2 * in) {
      i = j >> 1;
    } else if (exact) {
      i = static_cast<int64_t>(std::floor(static_cast<float>((static_cast<double>(j) + 0.5) * s)));
    } else {
      i = static_cast<int64_t>(std::floor(static_cast<float>(j) * s));
    }
    m[static_cast<size_t>(j)] = std::min(i, in - 1);
  }
  return m;
}

// aten's area_pixel_compute_scale / area_pixel_compute_source_index / guard_index_and_lambda,
// in the op's math type.
template <typename acc_t>
LinearTable linear_table(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  LinearTable t;
  const auto n = static_cast<size_t>(out);
  t.index0.resize(n);
  t.index1.resize(n);
  t.lambda0.resize(n);
  t.lambda1.resize(n);
  const acc_t ratio =
      align_corners
          ? (out > 1 ? static_cast<acc_t>(in - 1) / static_cast<acc_t>(out - 1) : acc_t(0))
          : scale_value<acc_t>(scale, in, out);
  for (int64_t j = 0; j < out; ++j) {
    const auto u = static_cast<size_t>(j);
    if (in == out) {
      t.index0[u] = t.index1[u] = j;
      t.lambda0[u] = 1.0;
      t.lambda1[u] = 0.0;
      continue;
    }
    acc_t real = align_corners ? ratio * static_cast<acc_t>(j)
                               : ratio * (static_cast<acc_t>(j) + acc_t(0.5)) - acc_t(0.5);
    if (!align_corners && real < acc_t(0)) real = acc_t(0);
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const acc_t l1 = std::min(std::max(real - static_cast<acc_t>(i0), acc_t(0)), acc_t(1));
    t.index0[u] = i0;
    t.index1[u] = i0 + (i0 < in - 1 ? 1 : 0);
    t.lambda1[u] = static_cast<double>(l1);
    t.lambda0[u] = static_cast<double>(acc_t(1) - l1);
  }
  return t;
}

LinearTable linear_table_for(DType dtype, int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale) {
  return dtype == DType::Float64 ? linear_table<double>(in, out, align_corners, scale)
                                 : linear_table<float>(in, out, align_corners, scale);
}

}  // namespace upsample

namespace {

using namespace upsample;

using IV = std::vector<int64_t>;
using DV = std::vector<double>;

// aten's upsample_{1,2}d_common_check: rank, sizes > 0 (an empty batch is allowed).
void check_upsample(const Tensor& self, IntList output_size, const UpsampleKind& kind) {
  KILN_CHECK(static_cast<int64_t>(output_size.size()) == kind.dims,
             "{}: it is expected output_size equals to {}, but got size {}", kind.name, kind.dims,
             output_size.size());
  KILN_CHECK(self.dim() == kind.dims + 2,
             "{}: expected a {}-D input (N, C{}), but got an input of sizes {}", kind.name,
             kind.dims + 2, kind.dims == 1 ? ", W" : ", H, W", sizes_str(self.sizes()));
  bool positive = self.size(1) > 0;
  for (int64_t d = 0; d < kind.dims; ++d) {
    positive = positive && self.size(2 + d) > 0 && output_size[static_cast<size_t>(d)] > 0;
  }
  KILN_CHECK(positive,
             "{}: input and output sizes should be greater than 0, but got input {} and "
             "output_size {}",
             kind.name, sizes_str(self.sizes()), sizes_str(output_size));
  if (kind.interp == Interp::Linear) {
    KILN_CHECK_T(TypeError, is_floating_point(self.dtype()),
                 "{}: expected a floating point input, but got {}", kind.name,
                 dtype_name(self.dtype()));
  }
}

MemoryFormat output_format(const Tensor& self) {
  return self.dim() == 4 ? self.suggest_memory_format() : MemoryFormat::Contiguous;
}

std::vector<TensorMeta> upsample_meta(const Tensor& self, IntList output_size,
                                      const UpsampleKind& kind) {
  check_upsample(self, output_size, kind);
  TensorMeta m;
  DimVector sizes{self.size(0), self.size(1)};
  for (int64_t s : output_size) sizes.push_back(s);
  m.sizes = to_sym(sizes);
  m.strides = to_sym(strides_for_memory_format(sizes, output_format(self)));
  m.dtype = self.dtype();
  m.device = self.device();
  return {m};
}

void upsample_impl(const Tensor& self, const Tensor& out, const UpsampleKind& kind,
                   bool align_corners, const Scales& scales) {
  if (out.numel() == 0) return;
  const bool channels_last = output_format(self) == MemoryFormat::ChannelsLast;
  const MemoryFormat fmt = channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  // A dense target in the output's layout (out= tensors may have any layout).
  Tensor target = out.is_contiguous(fmt) && out.dtype() == self.dtype()
                      ? out
                      : empty_strided(out.sizes(), strides_for_memory_format(out.sizes(), fmt),
                                      TensorOptions(self.dtype()).device(out.device()));
  if (kind.interp == Interp::Linear) {
    Tensor in = self.contiguous(fmt);
    const int64_t ow = out.size(-1), iw = self.size(-1);
    const LinearTable wt = linear_table_for(self.dtype(), iw, ow, align_corners, scales.back());
    if (kind.dims == 1) {
      const LinearTable ht = linear_table_for(self.dtype(), 1, 1, align_corners, std::nullopt);
      linear_upsample_kernels(target.unsqueeze(2), in.unsqueeze(2), ht, wt, false, false);
    } else {
      const LinearTable ht =
          linear_table_for(self.dtype(), self.size(2), out.size(2), align_corners, scales[0]);
      linear_upsample_kernels(target, in, ht, wt, true, channels_last);
    }
  } else {
    std::vector<std::vector<int64_t>> maps{strided::identity_map(self.size(0)),
                                           strided::identity_map(self.size(1))};
    for (int64_t d = 0; d < kind.dims; ++d) {
      maps.push_back(nearest_map(self.size(2 + d), out.size(2 + d), scales[static_cast<size_t>(d)],
                                 kind.interp == Interp::NearestExact));
    }
    if (channels_last) {
      // In NHWC order the target is row-major: remap over the permuted views.
      const IV perm{0, 2, 3, 1};
      Tensor src = self.permute(perm);
      strided::remap_copy(target.permute(perm), src, src.strides(),
                          {maps[0], maps[2], maps[3], maps[1]});
    } else {
      strided::remap_copy(target, self, self.strides(), maps);
    }
  }
  if (!target.is_same(out)) {
    Tensor dst = out;
    dst.copy_(target);
  }
}

// Through the op's backward op (a fast kernel; differentiable through its decomposition):
// (grad_output, output_size, input_size, [align_corners], scales...).
std::vector<Tensor> call_upsample_backward(const Tensor& grad, const Tensor& self,
                                           const UpsampleKind& kind, bool align_corners,
                                           const Scales& scales) {
  const OpDef& op = OpRegistry::instance().get(kind.name + "_backward");
  IV output_size(grad.sizes().begin() + 2, grad.sizes().end());
  Stack args{grad, to_sym(output_size), to_sym(self.sizes())};
  if (kind.interp == Interp::Linear) args.emplace_back(align_corners);
  for (const std::optional<double>& s : scales) args.emplace_back(s);
  return call(op, std::move(args));
}

// ---------------------------------------------------------------- the .vec forms

// Output size and per-dim scales from (output_size | scale_factors), as aten's
// upsample::compute_output_size does.
std::pair<IV, Scales> vec_sizes(const Tensor& input, const IValue& output_size,
                                const IValue& scale_factors, const UpsampleKind& kind) {
  const bool has_size = !output_size.is_none(), has_scale = !scale_factors.is_none();
  KILN_CHECK(has_size != has_scale,
             "{}.vec: must specify exactly one of output_size and scale_factors", kind.name);
  KILN_CHECK(input.dim() == kind.dims + 2,
             "{}.vec: expected a {}-D input, but got an input of sizes {}", kind.name,
             kind.dims + 2, sizes_str(input.sizes()));
  if (has_size) {
    return {output_size.to_int_list(), Scales(static_cast<size_t>(kind.dims))};
  }
  const DV& factors = scale_factors.to_double_list();
  KILN_CHECK(static_cast<int64_t>(factors.size()) == kind.dims,
             "{}.vec: it is expected scale_factors has {} entries (one per spatial dim), but "
             "got {}",
             kind.name, kind.dims, factors.size());
  IV sizes;
  Scales scales;
  for (int64_t d = 0; d < kind.dims; ++d) {
    const double f = factors[static_cast<size_t>(d)];
    sizes.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + d)) * f)));
    scales.emplace_back(f);
  }
  return {sizes, scales};
}

// ---------------------------------------------------------------- decompositions

// The plain form: (self, output_size, [align_corners], scales...).
std::vector<Tensor> plain_decomposition(const Stack& args, const UpsampleKind& kind) {
  const Tensor& self = args[0].to_tensor();
  const IV output_size = args[1].to_int_list();
  check_upsample(self, output_size, kind);
  const bool linear = kind.interp == Interp::Linear;
  Scales s;
  for (int64_t d = 0; d < kind.dims; ++d) {
    s.push_back(args[(linear ? 3 : 2) + static_cast<size_t>(d)].to_optional_double());
  }
  return {upsample_decomposition(self, output_size, kind, linear && args[2].to_bool(), s)};
}

// The .vec form: (input, output_size, [align_corners], scale_factors).
std::vector<Tensor> vec_decomposition(const Stack& args, const UpsampleKind& kind) {
  const Tensor& input = args[0].to_tensor();
  const bool linear = kind.interp == Interp::Linear;
  auto [sizes, scales] = vec_sizes(input, args[1], args[linear ? 3 : 2], kind);
  check_upsample(input, sizes, kind);
  return {upsample_decomposition(input, sizes, kind, linear && args[2].to_bool(), scales)};
}

// ---------------------------------------------------------------- declarations

// Samples for the plain form: (self, output_size, [align_corners], scales...).
std::vector<Sample> plain_samples(const UpsampleKind& kind) {
  const bool linear = kind.interp == Interp::Linear;
  auto args = [&](Tensor t, IV size, bool align, std::optional<double> s) {
    Stack a{std::move(t), size};
    if (linear) a.emplace_back(align);
    for (int64_t d = 0; d < kind.dims; ++d) a.emplace_back(s);
    return a;
  };
  if (kind.dims == 1) {
    return {
        {args(make_sample({2, 3, 5}, kFloat32), {9}, false, std::nullopt), "upsample"},
        {args(make_sample({2, 3, 8}, kFloat64), {5}, true, std::nullopt), "downsample"},
        {args(make_sample({1, 2, 4}, kFloat32), {10}, false, 2.5), "explicit scale"},
        {args(make_noncontiguous_sample({2, 2, 6}, kFloat32), {12}, true, std::nullopt),
         "non-contiguous, 2x"},
        {args(make_sample({0, 2, 4}, kFloat32), {7}, false, std::nullopt), "empty batch"},
        {args(make_sample({2, 3, 5}, kFloat32), {5}, false, std::nullopt), "same size"},
        {args(make_sample({2, 5}, kFloat32), {9}, false, std::nullopt), "2-D input (raises)"},
    };
  }
  return {
      {args(make_sample({2, 3, 4, 5}, kFloat32), {7, 9}, false, std::nullopt), "upsample"},
      {args(make_sample({1, 2, 8, 6}, kFloat64), {3, 4}, true, std::nullopt), "downsample"},
      {args(make_sample({1, 2, 3, 4}, kFloat32), {7, 10}, false, 2.5), "explicit scales"},
      {args(make_sample({2, 4, 3, 5}, kFloat32).contiguous(MemoryFormat::ChannelsLast), {6, 11},
            true, std::nullopt),
       "channels-last"},
      {args(make_noncontiguous_sample({1, 2, 3, 4}, kFloat32), {6, 8}, false, std::nullopt),
       "non-contiguous, 2x"},
      {args(make_sample({0, 2, 3, 3}, kFloat32), {5, 5}, false, std::nullopt), "empty batch"},
      {args(make_sample({1, 2, 3, 4}, kFloat32), {0, 4}, false, std::nullopt),
       "zero output size (raises)"},
  };
}

std::vector<Sample> vec_samples(const UpsampleKind& kind) {
  const bool linear = kind.interp == Interp::Linear;
  auto args = [&](Tensor t, std::optional<IV> size, bool align, std::optional<DV> factors) {
    Stack a{std::move(t), size ? IValue(*size) : IValue()};
    if (linear) a.emplace_back(align);
    a.emplace_back(factors ? IValue(*factors) : IValue());
    return a;
  };
  if (kind.dims == 1) {
    return {
        {args(make_sample({2, 3, 5}, kFloat32), IV{8}, false, std::nullopt), "output_size"},
        {args(make_sample({2, 3, 5}, kFloat64), std::nullopt, true, DV{1.7}), "scale_factors"},
        {args(make_sample({1, 2, 7}, kFloat32), std::nullopt, false, DV{0.6}), "downscale"},
        {args(make_sample({1, 2, 7}, kFloat32), IV{8}, false, DV{2.0}), "both given (raises)"},
    };
  }
  return {
      {args(make_sample({2, 3, 4, 5}, kFloat32), IV{7, 3}, false, std::nullopt), "output_size"},
      {args(make_sample({1, 2, 4, 5}, kFloat64), std::nullopt, true, DV{1.5, 2.3}),
       "scale_factors"},
      {args(make_sample({2, 3, 4, 5}, kFloat32).contiguous(MemoryFormat::ChannelsLast),
            std::nullopt, false, DV{2.0, 0.5}),
       "channels-last, scale_factors"},
      {args(make_sample({1, 2, 4, 5}, kFloat32), std::nullopt, false, std::nullopt),
       "neither given (raises)"},
  };
}

void declare_upsample(const UpsampleKind& kind) {
  const bool linear = kind.interp == Interp::Linear;
  const std::string align = linear ? ", bool align_corners" : "";
  const std::string scales =
      kind.dims == 1 ? "float? scales=None" : "float? scales_h=None, float? scales_w=None";
  // args: self, output_size, [align_corners], scales...
  const size_t scales_at = linear ? 3 : 2;
  declare(OpBuilder(fmt::format("{}(Tensor self, SymInt[{}] output_size{}, {}) -> Tensor",
                                kind.name, kind.dims, align, scales))
              .meta([kind](const Stack& args) {
                return upsample_meta(args[0].to_tensor(), args[1].to_int_list(), kind);
              })
              .cpu([kind, linear, scales_at](const Stack& args, const std::vector<Tensor>& outs) {
                Scales s;
                for (int64_t d = 0; d < kind.dims; ++d) {
                  s.push_back(args[scales_at + static_cast<size_t>(d)].to_optional_double());
                }
                upsample_impl(args[0].to_tensor(), outs[0], kind, linear && args[2].to_bool(), s);
              })
              .derivative(
                  [kind, linear, scales_at](const BackwardArgs& a) -> std::vector<Tensor> {
                    Scales s;
                    for (int64_t d = 0; d < kind.dims; ++d) {
                      s.push_back(
                          a.inputs[scales_at + static_cast<size_t>(d)].to_optional_double());
                    }
                    return call_upsample_backward(a.grad_outputs[0], a.inputs[0].to_tensor(), kind,
                                                  linear && a.inputs[2].to_bool(), s);
                  },
                  DerivativeReads::Nothing)
              .decomposition([kind](const Stack& a) { return plain_decomposition(a, kind); })
              .out_variant()
              .samples([kind] { return plain_samples(kind); }));
  const bool vec_out = kind.dims == 2 && kind.interp != Interp::NearestExact;  // as in aten
  OpBuilder vec(
      fmt::format("{}.vec(Tensor input, SymInt[]? output_size{}, float[]? scale_factors) -> Tensor",
                  kind.name, align));
  const size_t factors_at = linear ? 3 : 2;
  std::move(vec)
      .meta([kind, factors_at](const Stack& args) {
        const Tensor& input = args[0].to_tensor();
        return upsample_meta(input, vec_sizes(input, args[1], args[factors_at], kind).first, kind);
      })
      .cpu([kind, linear, factors_at](const Stack& args, const std::vector<Tensor>& outs) {
        const Tensor& input = args[0].to_tensor();
        auto sizes_and_scales = vec_sizes(input, args[1], args[factors_at], kind);
        upsample_impl(input, outs[0], kind, linear && args[2].to_bool(), sizes_and_scales.second);
      })
      .derivative(
          [kind, linear, factors_at](const BackwardArgs& a) -> std::vector<Tensor> {
            const Tensor& input = a.inputs[0].to_tensor();
            auto sizes_and_scales = vec_sizes(input, a.inputs[1], a.inputs[factors_at], kind);
            return call_upsample_backward(a.grad_outputs[0], input, kind,
                                          linear && a.inputs[2].to_bool(), sizes_and_scales.second);
          },
          DerivativeReads::Nothing)
      .decomposition([kind](const Stack& a) { return vec_decomposition(a, kind); })
      .samples([kind] { return vec_samples(kind); });
  if (vec_out) std::move(vec).out_variant();
  declare(std::move(vec));
}

KILN_REGISTER_OPS(upsample) {
  declare_upsample({Interp::Nearest, 1, "upsample_nearest1d"});
  declare_upsample({Interp::Nearest, 2, "upsample_nearest2d"});
  declare_upsample({Interp::NearestExact, 1, "_upsample_nearest_exact1d"});
  declare_upsample({Interp::NearestExact, 2, "_upsample_nearest_exact2d"});
  declare_upsample({Interp::Linear, 1, "upsample_linear1d"});
  declare_upsample({Interp::Linear, 2, "upsample_bilinear2d"});
}

}  // namespace
}  // namespace kiln::ops

namespace kiln {

namespace {
Tensor call_upsample(const char* name, ops::Stack args) {
  return ops::call1(ops::OpRegistry::instance().get(name), std::move(args));
}
}  // namespace

Tensor upsample_nearest1d(const Tensor& self, IntList output_size, std::optional<double> scales,
                          const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_upsample("upsample_nearest1d", {self, to_sym(output_size), scales});
}
Tensor upsample_nearest2d(const Tensor& self, IntList output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_upsample("upsample_nearest2d", {self, to_sym(output_size), scales_h, scales_w});
}
Tensor upsample_nearest_exact1d(const Tensor& self, IntList output_size,
                                std::optional<double> scales, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_upsample("_upsample_nearest_exact1d", {self, to_sym(output_size), scales});
}
Tensor upsample_nearest_exact2d(const Tensor& self, IntList output_size,
                                std::optional<double> scales_h, std::optional<double> scales_w,
                                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_upsample("_upsample_nearest_exact2d",
                       {self, to_sym(output_size), scales_h, scales_w});
}
Tensor upsample_linear1d(const Tensor& self, IntList output_size, bool align_corners,
                         std::optional<double> scales, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_upsample("upsample_linear1d", {self, to_sym(output_size), align_corners, scales});
}
Tensor upsample_bilinear2d(const Tensor& self, IntList output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w,
                           const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_upsample("upsample_bilinear2d",
                       {self, to_sym(output_size), align_corners, scales_h, scales_w});
}

}  // namespace kiln
