// conv{1,2,3}d (int and "same"/"valid" padding) and conv_transpose{1,2,3}d: composites over
// convolution that add unbatched inputs and padding modes, as torch.nn.functional does.
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_samples.h"

#include <kiln/ops/conv.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

#include <fmt/format.h>

#include <string>

namespace kiln::ops {
namespace {

const OpDef& convolution_op() {
  static const OpDef& op = OpRegistry::instance().get("convolution");
  return op;
}

// Adds a batch dim to an unbatched input (rank k + 1); returns whether it did.
bool add_batch_dim(Tensor& input, int64_t spatial, const std::string& name) {
  KILN_CHECK(input.dim() == spatial + 1 || input.dim() == spatial + 2,
             "{}: expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
             name, spatial + 1, spatial + 2, name, conv::sizes_str(input.sym_sizes()));
  if (input.dim() == spatial + 2) return false;
  input = input.unsqueeze(0);
  return true;
}

// The input with `extra[i]` zeros appended along spatial dim i, in the input's memory format.
Tensor pad_right(const Tensor& input, const std::vector<int64_t>& extra) {
  DimVector sizes(input.sizes().begin(), input.sizes().end());
  for (size_t i = 0; i < extra.size(); ++i) sizes[2 + i] += extra[i];
  Tensor padded = empty_strided(
      sizes, strides_for_memory_format(sizes, input.suggest_memory_format()), input.options());
  padded.copy_(scalar_tensor(0, input.options()));
  Tensor interior = padded;
  for (size_t i = 0; i < extra.size(); ++i) {
    interior =
        interior.narrow(static_cast<int64_t>(2 + i), 0, input.size(static_cast<int64_t>(2 + i)));
  }
  interior.copy_(input);
  return padded;
}

// A list argument with one value per spatial dim (a one-element list stands for all of them;
// convolution itself checks other lengths).
std::vector<int64_t> per_dim(const IValue& v, int64_t spatial) {
  std::vector<int64_t> list = v.to_int_list();
  if (list.size() == 1) list.resize(static_cast<size_t>(spatial), list[0]);
  KILN_CHECK(static_cast<int64_t>(list.size()) == spatial,
             "convolution: expected a list of {} values, got [{}]", spatial, fmt::join(list, ", "));
  return list;
}

// conv{k}d and conv{k}d.padding: (input, weight, bias, stride, padding, dilation, groups).
std::vector<Tensor> conv_nd(const Stack& args, int64_t spatial, const std::string& name) {
  Tensor input = args[0].to_tensor();
  const Tensor& weight = args[1].to_tensor();
  const bool unbatched = add_batch_dim(input, spatial, name);
  std::vector<int64_t> padding(static_cast<size_t>(spatial), 0);
  if (args[4].is_string()) {
    const std::string& mode = args[4].to_string();
    KILN_CHECK(mode == "same" || mode == "valid",
               "{}: invalid padding string '{}', expected 'same' or 'valid'", name, mode);
    if (mode == "same" && weight.dim() == spatial + 2) {
      const std::vector<int64_t> stride = per_dim(args[3], spatial);
      const std::vector<int64_t> dilation = per_dim(args[5], spatial);
      std::vector<int64_t> extra(static_cast<size_t>(spatial), 0);
      bool asymmetric = false;
      for (size_t i = 0; i < padding.size(); ++i) {
        KILN_CHECK(stride[i] == 1,
                   "{}: padding='same' is not supported for strided convolutions, got stride {}",
                   name, stride[i]);
        // Total padding d * (k - 1); an odd total puts the extra element on the right.
        const int64_t total = dilation[i] * (weight.size(static_cast<int64_t>(2 + i)) - 1);
        padding[i] = total / 2;
        extra[i] = total - 2 * padding[i];
        asymmetric = asymmetric || extra[i] != 0;
      }
      if (asymmetric) input = pad_right(input, extra);
    }
  } else {
    padding = args[4].to_int_list();
  }
  Tensor out =
      call1(convolution_op(), {input, args[1], args[2], args[3], padding, args[5], false,
                               std::vector<int64_t>(static_cast<size_t>(spatial), 0), args[6]});
  return {unbatched ? out.squeeze(0) : out};
}

// conv_transpose{k}d: (input, weight, bias, stride, padding, output_padding, groups, dilation).
std::vector<Tensor> conv_transpose_nd(const Stack& args, int64_t spatial, const std::string& name) {
  Tensor input = args[0].to_tensor();
  const bool unbatched = add_batch_dim(input, spatial, name);
  Tensor out = call1(convolution_op(),
                     {input, args[1], args[2], args[3], args[4], args[7], true, args[5], args[6]});
  return {unbatched ? out.squeeze(0) : out};
}

std::string list_default(int64_t spatial, int value) {
  std::string s = "[";
  for (int64_t i = 0; i < spatial; ++i) s += (i ? ", " : "") + std::to_string(value);
  return s + "]";
}

KILN_REGISTER_OPS(conv_composites) {
  for (int64_t k = 1; k <= 3; ++k) {
    const std::string name = "conv" + std::to_string(k) + "d";
    const std::string n = std::to_string(k);
    const std::string head = "(Tensor input, Tensor weight, Tensor? bias=None, SymInt[" + n +
                             "] stride=" + list_default(k, 1);
    const std::string tail =
        ", SymInt[" + n + "] dilation=" + list_default(k, 1) + ", SymInt groups=1) -> Tensor";
    declare(OpBuilder(name + head + ", SymInt[" + n + "] padding=" + list_default(k, 0) + tail)
                .composite([k, name](const Stack& args) { return conv_nd(args, k, name); })
                .tolerance(1e-4, 1e-4)
                .samples([k] { return conv::conv_nd_samples(k, false); }));
    declare(OpBuilder(name + ".padding" + head + ", str padding=\"valid\"" + tail)
                .composite([k, name](const Stack& args) { return conv_nd(args, k, name); })
                .tolerance(1e-4, 1e-4)
                .samples([k] { return conv::conv_nd_samples(k, true); }));

    const std::string tname = "conv_transpose" + std::to_string(k) + "d";
    const std::string schema =
        tname + (k == 1 ? "" : ".input") +
        "(Tensor input, Tensor weight, Tensor? bias=None, SymInt[" + n +
        "] stride=" + list_default(k, 1) + ", SymInt[" + n + "] padding=" + list_default(k, 0) +
        ", SymInt[" + n + "] output_padding=" + list_default(k, 0) + ", SymInt groups=1, SymInt[" +
        n + "] dilation=" + list_default(k, 1) + ") -> Tensor";
    declare(
        OpBuilder(schema)
            .composite([k, tname](const Stack& args) { return conv_transpose_nd(args, k, tname); })
            .tolerance(1e-4, 1e-4)
            .samples([k] { return conv::conv_transpose_nd_samples(k); }));
  }
}

IValue optional(const Tensor& t) { return t.defined() ? IValue(t) : IValue(); }

}  // namespace
}  // namespace kiln::ops

namespace kiln {

using ops::call1;
using ops::op_named;
using ops::optional;

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv1d");
  return call1(op, {input, weight, optional(bias), stride, padding, dilation, groups});
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv2d");
  return call1(op, {input, weight, optional(bias), stride, padding, dilation, groups});
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv3d");
  return call1(op, {input, weight, optional(bias), stride, padding, dilation, groups});
}

Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           IntList stride, std::string_view padding, IntList dilation,
                           int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv1d.padding");
  return call1(op, {input, weight, optional(bias), stride, padding, dilation, groups});
}
Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           IntList stride, std::string_view padding, IntList dilation,
                           int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv2d.padding");
  return call1(op, {input, weight, optional(bias), stride, padding, dilation, groups});
}
Tensor conv3d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           IntList stride, std::string_view padding, IntList dilation,
                           int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv3d.padding");
  return call1(op, {input, weight, optional(bias), stride, padding, dilation, groups});
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntList stride, IntList padding, IntList output_padding, int64_t groups,
                        IntList dilation, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv_transpose1d");
  return call1(op,
               {input, weight, optional(bias), stride, padding, output_padding, groups, dilation});
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntList stride, IntList padding, IntList output_padding, int64_t groups,
                        IntList dilation, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv_transpose2d.input");
  return call1(op,
               {input, weight, optional(bias), stride, padding, output_padding, groups, dilation});
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntList stride, IntList padding, IntList output_padding, int64_t groups,
                        IntList dilation, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("conv_transpose3d.input");
  return call1(op,
               {input, weight, optional(bias), stride, padding, output_padding, groups, dilation});
}

}  // namespace kiln
