#include "ops/conv/conv_params.h"

#include <kiln/core/error.h>

#include <fmt/format.h>

#include <string>

namespace kiln::ops::conv {
namespace {

std::string join(SymIntList sizes, const char* sep) {
  std::string s;
  for (const SymInt& d : sizes) s += (s.empty() ? "" : sep) + d.str();
  return s;
}

// PyTorch's expand_param_if_needed: one value stands for every spatial dim.
std::vector<int64_t> expand(std::vector<int64_t> v, const char* name, int64_t spatial) {
  if (v.size() == 1 && spatial != 1)
    return std::vector<int64_t>(static_cast<size_t>(spatial), v[0]);
  KILN_CHECK(static_cast<int64_t>(v.size()) == spatial,
             "convolution: expected {} to be a single integer value or a list of {} values to "
             "match the convolution dimensions, but got {}=[{}]",
             name, spatial, name, fmt::join(v, ", "));
  return v;
}

bool any_of(const std::vector<int64_t>& v, bool (*pred)(int64_t)) {
  for (int64_t x : v) {
    if (pred(x)) return true;
  }
  return false;
}

}  // namespace

ConvParams read_params(const Stack& args, int64_t spatial) {
  ConvParams p;
  p.stride = expand(args[3].to_int_list(), "stride", spatial);
  p.padding = expand(args[4].to_int_list(), "padding", spatial);
  p.dilation = expand(args[5].to_int_list(), "dilation", spatial);
  p.transposed = args[6].to_bool();
  p.output_padding = expand(args[7].to_int_list(), "output_padding", spatial);
  p.groups = args[8].to_int();
  KILN_CHECK(!any_of(p.stride, [](int64_t x) { return x <= 0; }),
             "convolution: non-positive stride is not supported, got stride=[{}]",
             fmt::join(p.stride, ", "));
  KILN_CHECK(!any_of(p.padding, [](int64_t x) { return x < 0; }),
             "convolution: negative padding is not supported, got padding=[{}]",
             fmt::join(p.padding, ", "));
  KILN_CHECK(!any_of(p.output_padding, [](int64_t x) { return x < 0; }),
             "convolution: negative output_padding is not supported, got output_padding=[{}]",
             fmt::join(p.output_padding, ", "));
  KILN_CHECK(!any_of(p.dilation, [](int64_t x) { return x <= 0; }),
             "convolution: dilation should be greater than zero, but got dilation=[{}]",
             fmt::join(p.dilation, ", "));
  KILN_CHECK(p.groups > 0, "convolution: non-positive groups is not supported, got groups={}",
             p.groups);
  if (p.transposed) {
    for (int64_t i = 0; i < spatial; ++i) {
      const size_t d = static_cast<size_t>(i);
      KILN_CHECK(p.output_padding[d] < p.stride[d] || p.output_padding[d] < p.dilation[d],
                 "convolution: output padding must be smaller than either stride or dilation, but "
                 "got output_padding=[{}], stride=[{}], dilation=[{}]",
                 fmt::join(p.output_padding, ", "), fmt::join(p.stride, ", "),
                 fmt::join(p.dilation, ", "));
    }
  }
  return p;
}

SymDimVector output_sizes(const Tensor& input, const Tensor& weight, const Tensor& bias,
                          const ConvParams& p) {
  const int64_t k = weight.dim();
  const int64_t spatial = p.spatial();
  KILN_CHECK(input.dim() == k,
             "convolution: expected {}-dimensional input for {}-dimensional weight {}, but got "
             "{}-dimensional input of size {} instead",
             k, k, sizes_str(weight.sym_sizes()), input.dim(), sizes_str(input.sym_sizes()));
  KILN_CHECK_T(TypeError, input.dtype() != DType::Bool, "convolution: not supported for dtype {}",
               dtype_name(input.dtype()));
  KILN_CHECK_T(TypeError, weight.dtype() == input.dtype(),
               "convolution: input type ({}) and weight type ({}) should be the same",
               dtype_name(input.dtype()), dtype_name(weight.dtype()));
  const SymInt groups(p.groups);
  const SymInt w0 = weight.sym_size(0);
  KILN_CHECK(w0 >= groups,
             "convolution: given groups={}, expected weight to be at least {} at dimension 0, "
             "but got weight of size {} instead",
             p.groups, p.groups, sizes_str(weight.sym_sizes()));
  KILN_CHECK(w0 % groups == SymInt(0),
             "convolution: given groups={}, expected weight to be divisible by {} at dimension 0, "
             "but got weight of size {} instead",
             p.groups, p.groups, sizes_str(weight.sym_sizes()));
  const SymInt c_in = input.sym_size(1);
  SymInt c_out;
  if (!p.transposed) {
    KILN_CHECK(c_in == weight.sym_size(1) * groups,
               "convolution: given groups={}, weight of size {}, expected input{} to have {} "
               "channels, but got {} channels instead",
               p.groups, sizes_str(weight.sym_sizes()), sizes_str(input.sym_sizes()),
               (weight.sym_size(1) * groups).str(), c_in.str());
    c_out = w0;
  } else {
    KILN_CHECK(c_in == w0,
               "convolution: given transposed=1, weight of size {}, expected input{} to have {} "
               "channels, but got {} channels instead",
               sizes_str(weight.sym_sizes()), sizes_str(input.sym_sizes()), w0.str(), c_in.str());
    c_out = weight.sym_size(1) * groups;
  }
  if (bias.defined()) {
    KILN_CHECK(bias.dim() == 1 && bias.sym_size(0) == c_out,
               "convolution: given {}weight of size {}, expected bias to be 1-dimensional with {} "
               "elements, but got bias of size {} instead",
               p.transposed ? "transposed=1, " : "", sizes_str(weight.sym_sizes()), c_out.str(),
               sizes_str(bias.sym_sizes()));
    KILN_CHECK_T(TypeError, bias.dtype() == input.dtype(),
                 "convolution: input type ({}) and bias type ({}) should be the same",
                 dtype_name(input.dtype()), dtype_name(bias.dtype()));
  }

  SymDimVector out{input.sym_size(0), c_out};
  SymDimVector padded, kernel, in_spatial, out_spatial;
  bool kernel_fits = true, output_positive = true;
  for (int64_t i = 0; i < spatial; ++i) {
    const size_t d = static_cast<size_t>(i);
    const SymInt in = input.sym_size(2 + i);
    const SymInt extent = SymInt(p.dilation[d]) * (weight.sym_size(2 + i) - SymInt(1)) + SymInt(1);
    in_spatial.push_back(in);
    if (!p.transposed) {
      const SymInt padded_in = in + SymInt(2 * p.padding[d]);
      padded.push_back(padded_in);
      kernel.push_back(extent);
      if (padded_in < extent) kernel_fits = false;
      out.push_back((padded_in - extent) / SymInt(p.stride[d]) + SymInt(1));
    } else {
      const SymInt o = (in - SymInt(1)) * SymInt(p.stride[d]) - SymInt(2 * p.padding[d]) + extent +
                       SymInt(p.output_padding[d]);
      if (o <= SymInt(0)) output_positive = false;
      out_spatial.push_back(o);
      out.push_back(o);
    }
  }
  KILN_CHECK(kernel_fits,
             "convolution: calculated padded input size per channel: ({}). Kernel size: ({}). "
             "Kernel size can't be greater than actual input size",
             join(padded, " x "), join(kernel, " x "));
  KILN_CHECK(output_positive,
             "convolution: given input size per channel: ({}). Calculated output size per "
             "channel: ({}). Output size is too small",
             join(in_spatial, " x "), join(out_spatial, " x "));
  return out;
}

MemoryFormat output_format(const Tensor& input, const Tensor& weight) {
  const MemoryFormat fmt = input.dim() == 4   ? MemoryFormat::ChannelsLast
                           : input.dim() == 5 ? MemoryFormat::ChannelsLast3d
                                              : MemoryFormat::Contiguous;
  if (fmt == MemoryFormat::Contiguous) return fmt;
  if (input.suggest_memory_format() == fmt || weight.suggest_memory_format() == fmt) return fmt;
  return MemoryFormat::Contiguous;
}

}  // namespace kiln::ops::conv
