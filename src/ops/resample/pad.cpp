// Padding: constant_pad_nd (fill, then copy the kept region), the reflect / replicate / circular
// pads (each output position reads one input position along every padded dim, so all three are
// one remap_copy with per-dim source tables), and the pad composite that picks among them as
// torch.nn.functional.pad does.
#include "ops/indexing/index_grad.h"
#include "ops/indexing/strided_loop.h"
#include "ops/resample/pad_common.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/resample.h>
#include <kiln/ops/view.h>

#include <algorithm>

namespace kiln::ops {

namespace padding {

// The input position output position j reads along a dim of size n padded by (lo, hi).
std::vector<int64_t> pad_source_map(PadMode mode, int64_t n, int64_t lo, int64_t hi) {
  const int64_t out_size = n + lo + hi;
  std::vector<int64_t> m(static_cast<size_t>(std::max<int64_t>(out_size, 0)));
  // Circular wraps within the part that negative pads keep, as aten's _pad_circular does.
  const int64_t crop_lo = std::max<int64_t>(-lo, 0);
  const int64_t kept = n - crop_lo - std::max<int64_t>(-hi, 0);
  for (int64_t j = 0; j < out_size; ++j) {
    int64_t i = j - lo;
    switch (mode) {
      case PadMode::Reflect:
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
        break;
      case PadMode::Replicate:
        i = std::clamp<int64_t>(i, 0, n - 1);
        break;
      case PadMode::Circular: {
        const int64_t c = j - std::max<int64_t>(lo, 0);
        i = crop_lo + ((c % kept) + kept) % kept;
        break;
      }
    }
    m[static_cast<size_t>(j)] = i;
  }
  return m;
}

// Each output position read one input position along every padded dim: the gradient is summed
// back through the per-dim source maps, one dim at a time (edges that several outputs read
// accumulate).
Tensor mode_pad_backward(const Tensor& grad, const Tensor& self, IntList padding, PadMode mode) {
  Tensor g = grad;
  DimVector sizes(g.sizes().begin(), g.sizes().end());
  for (size_t i = 0; i < padding.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    sizes[static_cast<size_t>(d)] = self.size(d);
    g = indexing::index_add_into_zeros(
        g, d, pad_source_index(mode, self.size(d), padding[2 * i], padding[2 * i + 1], g.device()),
        sizes);
  }
  return g;
}

// aten's checks of a mode pad's sizes (the backward ops run them too: their kernels index by
// the source maps these keep in range).
void check_mode_pads(const Tensor& self, IntList padding, PadMode mode, const char* op) {
  for (size_t i = 0; i < padding.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    const int64_t n = self.size(d), lo = padding[2 * i], hi = padding[2 * i + 1];
    if (mode == PadMode::Reflect) {
      KILN_CHECK(lo < n && hi < n,
                 "{}: padding size should be less than the corresponding input dimension, but "
                 "got: padding ({}, {}) at dimension {} of input {}",
                 op, lo, hi, d, fmt::format("[{}]", fmt::join(self.sizes(), ", ")));
    } else if (mode == PadMode::Circular) {
      KILN_CHECK(lo <= n && hi <= n,
                 "{}: padding ({}, {}) at dimension {} of input {} causes wrapping around more "
                 "than once",
                 op, lo, hi, d, fmt::format("[{}]", fmt::join(self.sizes(), ", ")));
      KILN_CHECK(n + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0) >= 1,
                 "{}: negative padding ({}, {}) at dimension {} of input {} leaves nothing to "
                 "wrap around",
                 op, lo, hi, d, fmt::format("[{}]", fmt::join(self.sizes(), ", ")));
    }
    KILN_CHECK(n + lo + hi >= 1,
               "{}: input {} is too small for padding ({}, {}) at dimension {}: the calculated "
               "output size {} must be at least 1",
               op, fmt::format("[{}]", fmt::join(self.sizes(), ", ")), lo, hi, d, n + lo + hi);
  }
}

}  // namespace padding

namespace {

using namespace padding;

using IV = std::vector<int64_t>;

// ---------------------------------------------------------------- constant_pad_nd

void check_pad_list(const Tensor& self, size_t pad_length, const char* op) {
  KILN_CHECK(pad_length % 2 == 0, "{}: length of pad must be even but instead it equals {}", op,
             pad_length);
  KILN_CHECK(static_cast<int64_t>(pad_length) <= 2 * self.dim(),
             "{}: length of pad should be no more than twice the number of dimensions of the "
             "input. Pad length is {} while the input has {} dimensions.",
             op, pad_length, self.dim());
}

// Output sizes: pad[2i], pad[2i+1] widen dim (ndim - 1 - i).
// Symbolic pads too (slice's gradient pads by its bounds).
SymDimVector padded_sizes(const Tensor& self, SymIntList pad, const char* op) {
  SymDimVector sizes = self.sym_sizes().vec();
  const int64_t ndim = self.dim();
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const auto d = static_cast<size_t>(ndim - 1 - static_cast<int64_t>(i));
    SymInt out = sizes[d] + pad[2 * i] + pad[2 * i + 1];
    KILN_CHECK(out >= SymInt(0),
               "{}: the input size {}, plus negative padding {} and {} resulted in a negative "
               "output size, which is invalid. Check dimension {} of your input.",
               op, sizes[d].str(), pad[2 * i].str(), pad[2 * i + 1].str(), d);
    sizes[d] = out;
  }
  return sizes;
}

std::vector<TensorMeta> constant_pad_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<SymInt> pad = args[1].to_sym_int_list();
  check_pad_list(self, pad.size(), "constant_pad_nd");
  return {TensorMeta::contiguous(padded_sizes(self, pad, "constant_pad_nd"), self.dtype(),
                                 self.device())};
}

void constant_pad_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const IV pad = args[1].to_int_list();
  Tensor out = outs[0];
  out.fill_(args[2].to_scalar());
  // The kept part of self lands in the matching window of out (negative pads crop self).
  Tensor src = self, dst = out;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    const int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
    const int64_t kept = self.size(d) + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0);
    if (kept <= 0) return;  // nothing of self survives: out is all `value`
    src = src.narrow(d, std::max<int64_t>(-lo, 0), kept);
    dst = dst.narrow(d, std::max<int64_t>(lo, 0), kept);
  }
  dst.copy_(src);
}

// ---------------------------------------------------------------- reflect / replicate / circular

// aten's check for reflection/replication pads of `dims` spatial dims: (dims+1)-D input, or
// (dims+2)-D with a batch dim that may be empty; every other dim non-empty.
void check_pad_input(const Tensor& self, IntList padding, int64_t dims, const char* op) {
  KILN_CHECK(static_cast<int64_t>(padding.size()) == 2 * dims,
             "{}: padding size is expected to be {}, but got: {}", op, 2 * dims, padding.size());
  const int64_t nd = self.dim();
  bool valid = nd == dims + 1 || nd == dims + 2;
  for (int64_t d = nd == dims + 2 ? 1 : 0; valid && d < nd; ++d) valid = self.size(d) != 0;
  KILN_CHECK(valid,
             "{}: expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other "
             "non-zero dimensions for input, but got: {}",
             op, dims + 1, dims + 2, sizes_str(self.sizes()));
}

std::vector<TensorMeta> mode_pad_meta(const Tensor& self, IntList padding, PadMode mode,
                                      const char* op) {
  check_mode_pads(self, padding, mode, op);
  return {
      TensorMeta::contiguous(padded_sizes(self, to_sym(padding), op), self.dtype(), self.device())};
}

void mode_pad_impl(const Tensor& self, IntList padding, PadMode mode, const Tensor& out) {
  if (out.numel() == 0) return;
  Tensor target = strided::dense_target(out, self.dtype());
  std::vector<std::vector<int64_t>> maps;
  const auto padded = static_cast<int64_t>(padding.size() / 2);
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t i = self.dim() - 1 - d;  // pad pair index of dim d
    if (i < padded) {
      maps.push_back(pad_source_map(mode, self.size(d), padding[static_cast<size_t>(2 * i)],
                                    padding[static_cast<size_t>(2 * i + 1)]));
    } else {
      maps.push_back(strided::identity_map(self.size(d)));
    }
  }
  strided::remap_copy(target, self, self.strides(), maps);
  strided::commit(out, target);
}

// _pad_circular's derivative: the formula in kiln ops (aten has no backward op for it).
std::vector<Tensor> circular_pad_derivative(const BackwardArgs& a) {
  return {mode_pad_backward(a.grad_outputs[0], a.inputs[0].to_tensor(), a.inputs[1].to_int_list(),
                            PadMode::Circular)};
}

void declare_mode_pad(PadMode mode, int64_t dims) {
  const std::string name =
      fmt::format("{}{}d", mode == PadMode::Reflect ? "reflection_pad" : "replication_pad", dims);
  const std::string schema =
      fmt::format("{}(Tensor self, SymInt[{}] padding) -> Tensor", name, 2 * dims);
  declare(OpBuilder(schema)
              .meta([mode, dims, name](const Stack& args) {
                const Tensor& self = args[0].to_tensor();
                const IV padding = args[1].to_int_list();
                check_pad_input(self, padding, dims, name.c_str());
                return mode_pad_meta(self, padding, mode, name.c_str());
              })
              .cpu([mode](const Stack& args, const std::vector<Tensor>& outs) {
                mode_pad_impl(args[0].to_tensor(), args[1].to_int_list(), mode, outs[0]);
              })
              .derivative(
                  // Through the backward op (a fast kernel; differentiable through its
                  // decomposition).
                  [name](const BackwardArgs& a) -> std::vector<Tensor> {
                    return {call1(OpRegistry::instance().get(name + "_backward"),
                                  {a.grad_outputs[0], a.inputs[0], a.inputs[1]})};
                  },
                  DerivativeReads::Nothing)
              .decomposition([mode, dims, name](const Stack& args) -> std::vector<Tensor> {
                const Tensor& self = args[0].to_tensor();
                const IV padding = args[1].to_int_list();
                check_pad_input(self, padding, dims, name.c_str());
                check_mode_pads(self, padding, mode, name.c_str());
                return {mode_pad_decomposition(self, padding, mode)};
              })
              .out_variant()
              .samples([dims] {
                // Spatial sizes 3..5; pads up to 2 on each side (reflect needs pad < size).
                IV spatial(static_cast<size_t>(dims), 4);
                spatial.back() = 5;
                IV batched = {2, 3};
                batched.insert(batched.end(), spatial.begin(), spatial.end());
                IV unbatched = {3};
                unbatched.insert(unbatched.end(), spatial.begin(), spatial.end());
                IV pads, crops;
                for (int64_t i = 0; i < dims; ++i) {
                  pads.insert(pads.end(), {2, 1});
                  crops.insert(crops.end(), {-1, 3});
                }
                IV empty_batch = batched;
                empty_batch[0] = 0;
                return std::vector<Sample>{
                    {{make_sample(batched, kFloat32), pads}, "batched"},
                    {{make_sample(unbatched, kFloat64), pads}, "unbatched"},
                    {{make_noncontiguous_sample(batched, kInt64), pads}, "non-contiguous int64"},
                    {{make_sample(batched, kFloat32, -3, 3, 1), crops}, "negative pad crops"},
                    {{make_sample(empty_batch, kFloat32), pads}, "empty batch"},
                    {{make_sample(batched, kFloat32), IV(static_cast<size_t>(2 * dims), 5)},
                     "pad too large (reflect raises)"},
                };
              }));
}

KILN_REGISTER_OPS(mode_pads) {
  for (int64_t dims = 1; dims <= 3; ++dims) {
    declare_mode_pad(PadMode::Reflect, dims);
    declare_mode_pad(PadMode::Replicate, dims);
  }
}

std::vector<TensorMeta> circular_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const IV pad = args[1].to_int_list();
  KILN_CHECK(pad.size() % 2 == 0, "_pad_circular: padding length must be divisible by 2, got {}",
             pad.size());
  const int64_t nonpadded = self.dim() - static_cast<int64_t>(pad.size() / 2);
  KILN_CHECK(nonpadded == 1 || nonpadded == 2,
             "_pad_circular: invalid padding size, expected 1 or 2 non-padded dimensions, which "
             "would be equivalent to padding of length {} or {} respectively but got {}",
             (self.dim() - 1) * 2, (self.dim() - 2) * 2, pad.size());
  return mode_pad_meta(self, pad, PadMode::Circular, "_pad_circular");
}

// ---------------------------------------------------------------- pad (F.pad)

Tensor pad_composite(const Tensor& self, const IV& pad, const std::string& mode,
                     std::optional<double> value) {
  KILN_CHECK(pad.size() % 2 == 0, "pad: padding length must be divisible by 2, got {}", pad.size());
  KILN_CHECK(static_cast<int64_t>(pad.size()) <= 2 * self.dim(),
             "pad: padding length should be less than or equal to two times the input dimension "
             "but got padding length {} and input of dimension {}",
             pad.size(), self.dim());
  if (mode == "constant") return constant_pad_nd(self, pad, value.value_or(0.0));
  KILN_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular",
             "pad: unrecognised padding mode '{}' (expected constant, reflect, replicate or "
             "circular)",
             mode);
  KILN_CHECK(!value || *value == 0.0, "pad: padding mode \"{}\" doesn't take in value argument",
             mode);
  const auto dims = static_cast<int64_t>(pad.size() / 2);
  const int64_t nd = self.dim();
  KILN_CHECK(dims >= 1 && dims <= 3 && (nd == dims + 1 || nd == dims + 2),
             "pad: padding size {} is not supported for {}D input tensor. Supported combinations "
             "for non-constant padding: 2D or 3D input with padding size 2 (pads the last dim), "
             "3D or 4D input with padding size 4 (the last 2 dims), 4D or 5D input with padding "
             "size 6 (the last 3 dims)",
             pad.size(), nd);
  if (mode == "circular") return pad_circular(self, pad);
  const bool reflect = mode == "reflect";
  switch (dims) {
    case 1:
      return reflect ? reflection_pad1d(self, pad) : replication_pad1d(self, pad);
    case 2:
      return reflect ? reflection_pad2d(self, pad) : replication_pad2d(self, pad);
    default:
      return reflect ? reflection_pad3d(self, pad) : replication_pad3d(self, pad);
  }
}

}  // namespace

KILN_OP("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
    .meta(constant_pad_meta)
    .cpu(constant_pad_impl)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The kept window of the gradient: the opposite pads crop what padding added and
          // zero-fill what cropping removed.
          static const OpDef& pad_op = OpRegistry::instance().get("constant_pad_nd");
          std::vector<SymInt> pad = a.inputs[1].to_sym_int_list();
          for (SymInt& p : pad) p = SymInt(int64_t{0}) - p;
          return {call1(pad_op, {a.grad_outputs[0], pad, Scalar(0)})};
        },
        DerivativeReads::Nothing)
    .decomposition([](const Stack& args) -> std::vector<Tensor> {
      constant_pad_meta(args);  // the op's checks
      return {constant_pad_decomposition(args[0].to_tensor(), args[1].to_sym_int_list(),
                                         args[2].to_scalar())};
    })
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), IV{1, 2}, 0}, "last dim"},
          {{make_sample({2, 3, 4}, kFloat64), IV{1, 0, 2, 1, 0, 1}, 1.5}, "every dim, value"},
          {{make_noncontiguous_sample({3, 4}, kInt32), IV{-1, 2, 0, -2}, 7}, "negative crops"},
          {{make_sample({3, 4}, kInt64), IV{1, 1}, 2.5}, "float value into int64"},
          {{make_sample({}, kFloat32), IV{}, 0}, "0-dim, no pad"},
          {{make_sample({0, 3}, kFloat32), IV{1, 1, 2, 0}, -1}, "empty input"},
          {{make_sample({4}, kBool), IV{2, 1}, true}, "bool"},
          {{make_sample({3, 4}, kFloat32), IV{-3, -2}, 0}, "crop to empty"},
          {{make_sample({3, 4}, kFloat32), IV{1, 1, 1}, 0}, "odd pad list (raises)"},
          {{make_sample({3}, kFloat32), IV{1, 1, 1, 1}, 0}, "pad list too long (raises)"},
      };
    });

KILN_OP("_pad_circular(Tensor self, SymInt[] pad) -> Tensor")
    .meta(circular_meta)
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      mode_pad_impl(args[0].to_tensor(), args[1].to_int_list(), PadMode::Circular, outs[0]);
    })
    .derivative(circular_pad_derivative, DerivativeReads::Nothing)
    .decomposition([](const Stack& args) -> std::vector<Tensor> {
      circular_meta(args);  // the op's checks
      return {
          mode_pad_decomposition(args[0].to_tensor(), args[1].to_int_list(), PadMode::Circular)};
    })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 5}, kFloat32), IV{2, 3}}, "1 dim, unbatched"},
          {{make_sample({2, 3, 4, 5}, kFloat64), IV{1, 2, 4, 0}}, "2 dims, batched"},
          {{make_noncontiguous_sample({1, 2, 3, 4, 5}, kInt64), IV{1, 1, 2, 2, 3, 3}}, "3 dims"},
          {{make_sample({1, 2, 6}, kFloat32), IV{-1, 2}}, "negative pad"},
          {{make_sample({2, 3}, kFloat32), IV{4, 1}}, "wraps twice (raises)"},
      };
    });

KILN_OP("pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor")
    .composite([](const Stack& args) -> std::vector<Tensor> {
      return {pad_composite(args[0].to_tensor(), args[1].to_int_list(), args[2].to_string(),
                            args[3].to_optional_double())};
    })
    .samples([] {
      using std::string;
      return std::vector<Sample>{
          {{make_sample({2, 3, 4}, kFloat32), IV{1, 2}, string("constant"), 0.5}, "constant"},
          {{make_sample({3}, kFloat32), IV{1, 2}, string("constant"), std::nullopt},
           "constant 1-D, no value"},
          {{make_sample({2, 3, 4}, kFloat32), IV{1, 2}, string("reflect"), std::nullopt},
           "reflect 3-D"},
          {{make_sample({3, 4}, kFloat64), IV{3, 2}, string("reflect"), std::nullopt},
           "reflect 2-D"},
          {{make_sample({1, 2, 3, 4}, kFloat32), IV{1, 2, 2, 1}, string("reflect"), 0.0},
           "reflect 2 dims, value 0"},
          {{make_sample({1, 2, 3, 4, 5}, kFloat32), IV{1, 2, 2, 1, 1, 1}, string("replicate"),
            std::nullopt},
           "replicate 3 dims"},
          {{make_noncontiguous_sample({2, 3, 4}, kFloat32), IV{1, 2, 3, 0}, string("replicate"),
            std::nullopt},
           "replicate 2 dims, unbatched"},
          {{make_sample({2, 3, 4}, kFloat32), IV{2, 3}, string("circular"), std::nullopt},
           "circular"},
          {{make_sample({2, 3, 4}, kFloat32), IV{4, 0}, string("reflect"), std::nullopt},
           "reflect pad == size (raises)"},
          {{make_sample({3}, kFloat32), IV{1, 1}, string("reflect"), std::nullopt},
           "reflect 1-D input (raises)"},
          {{make_sample({2, 3, 4}, kFloat32), IV{1, 1}, string("reflect"), 1.0},
           "reflect with value (raises)"},
          {{make_sample({2, 3, 4}, kFloat32), IV{1, 1, 1}, string("constant"), std::nullopt},
           "odd length (raises)"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

namespace {
Tensor call_pad(const char* name, const Tensor& self, IntList pad) {
  return ops::call1(ops::OpRegistry::instance().get(name), {self, to_sym(pad)});
}
}  // namespace

Tensor constant_pad_nd(const Tensor& self, IntList pad, const Scalar& value,
                       const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("constant_pad_nd");
  return ops::call1(op, {self, to_sym(pad), value}, &loc);
}
Tensor reflection_pad1d(const Tensor& self, IntList padding, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("reflection_pad1d", self, padding);
}
Tensor reflection_pad2d(const Tensor& self, IntList padding, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("reflection_pad2d", self, padding);
}
Tensor reflection_pad3d(const Tensor& self, IntList padding, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("reflection_pad3d", self, padding);
}
Tensor replication_pad1d(const Tensor& self, IntList padding, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("replication_pad1d", self, padding);
}
Tensor replication_pad2d(const Tensor& self, IntList padding, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("replication_pad2d", self, padding);
}
Tensor replication_pad3d(const Tensor& self, IntList padding, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("replication_pad3d", self, padding);
}
Tensor pad_circular(const Tensor& self, IntList pad, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return call_pad("_pad_circular", self, pad);
}
Tensor pad(const Tensor& self, IntList pad, const std::string& mode, std::optional<double> value,
           const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("pad");
  return ops::call1(op, {self, to_sym(pad), mode, value}, &loc);
}

}  // namespace kiln
