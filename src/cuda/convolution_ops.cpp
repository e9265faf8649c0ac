// The CUDA slots of convolution and convolution_backward (1-d to 3-d, transposed, groups) through
// cuDNN's convolution API: float32 with TF32 off (FMA kernels only, so results match the CPU's
// to float32 rounding), float64, and float16/bfloat16 accumulating in float32.
//
// Every pass is one of the three cuDNN runs of a forward convolution y = conv(x, w): Forward
// (writes y), BackwardData (writes x from y) and BackwardFilter (writes w from x and y). A
// transposed convolution is the BackwardData of the convolution that maps its output to its
// input, so its passes are the plain ones with x and y exchanged.
//
// Integer dtypes (cuDNN has no exact integer convolution) and problems cuDNN reports as not
// supported go through convolution_by_taps, written in kiln ops: one broadcast multiply and sum
// per kernel tap, accumulating in int64 (float32 for the half types), as exact as the CPU's loops.
#include "cuda/cudnn_handle.h"
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/conv/conv_backward.h"
#include "ops/conv/conv_params.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

#include <array>
#include <climits>
#include <exception>
#include <vector>

namespace kiln::cuda {
namespace {

using ops::Stack;
using ops::conv::ConvParams;

bool cudnn_takes(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float32 ||
         dtype == DType::Float64;
}

TensorOptions options_of(DType dtype, Device device) { return TensorOptions(dtype).device(device); }

// ---- cuDNN ----

enum class Pass { Forward, BackwardData, BackwardFilter };

// cuDNN's legacy API convolves 2 or 3 spatial dims: a 1-d convolution runs as a 2-d one over
// [N, C, 1, L].
std::vector<int> cudnn_dims(const Tensor& t) {
  std::vector<int> dims;
  for (int64_t d = 0; d < t.dim(); ++d) dims.push_back(static_cast<int>(t.size(d)));
  if (t.dim() == 3) dims.insert(dims.begin() + 2, 1);
  return dims;
}

std::vector<int> dense_strides(const std::vector<int>& dims) {
  std::vector<int> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

struct Descriptors {
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
};

// Float32 keeps to FMA kernels: CUDNN_DEFAULT_MATH would let cuDNN use TF32 tensor cores on
// A100 and later (a 10-bit mantissa), PyTorch's allow_tf32 = False is CUDNN_FMA_MATH too.
cudnnMathType_t requested_math(DType dtype) {
  if (dtype == DType::Float32) return CUDNN_FMA_MATH;
  if (dtype == DType::Float64) return CUDNN_DEFAULT_MATH;
  return CUDNN_TENSOR_OP_MATH;  // half types: tensor cores, accumulating in float32
}

// x, w and y dense (contiguous) of one dtype; every size fits an int (run_cudnn checks).
void describe(Descriptors& d, const Tensor& x, const Tensor& w, const Tensor& y,
              const ConvParams& p, const char* op) {
  const DType dtype = x.dtype();
  const cudnnDataType_t type = cudnn_data_type(dtype, op);
  // Half types accumulate in float32 (cuDNN's PSEUDO_HALF and PSEUDO_BFLOAT16 configurations).
  const cudnnDataType_t compute = dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const std::vector<int> xd = cudnn_dims(x), yd = cudnn_dims(y), wd = cudnn_dims(w);
  const std::vector<int> xs = dense_strides(xd), ys = dense_strides(yd);
  KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d.x.get(), type, static_cast<int>(xd.size()),
                                              xd.data(), xs.data()));
  KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d.y.get(), type, static_cast<int>(yd.size()),
                                              yd.data(), ys.data()));
  KILN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(d.w.get(), type, CUDNN_TENSOR_NCHW,
                                              static_cast<int>(wd.size()), wd.data()));
  std::vector<int> pad, stride, dilation;
  if (p.spatial() == 1) {
    pad.push_back(0);
    stride.push_back(1);
    dilation.push_back(1);
  }
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    pad.push_back(static_cast<int>(p.padding[s]));
    stride.push_back(static_cast<int>(p.stride[s]));
    dilation.push_back(static_cast<int>(p.dilation[s]));
  }
  KILN_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(d.conv.get(), static_cast<int>(pad.size()),
                                                   pad.data(), stride.data(), dilation.data(),
                                                   CUDNN_CROSS_CORRELATION, compute));
  KILN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv.get(), static_cast<int>(p.groups)));
  KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), requested_math(dtype)));
}

// An algorithm cuDNN's heuristics offer, with the math type it runs in.
struct Candidate {
  int algo;
  cudnnMathType_t math;
};

// FFT and Winograd algorithms transform the data, and their rounding grows with the transform
// and the values' range: resnet18's first convolution came out 3e-9 relative apart from the
// CPU's in float64, and a 3x3 filter gradient 1e-4 apart in float32, where direct sums agree to
// a few ulps. They are left out, as TF32 is.
bool transforms_data(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_data(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_data(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// The heuristics' answers that ran their checks successfully and keep the precision asked for:
// never a conversion of the data to a narrower type, no tensor cores for float32 (TF32), no
// transform algorithms.
template <typename Perf>
std::vector<Candidate> usable(const std::vector<Perf>& perf, int count, DType dtype) {
  std::vector<Candidate> out;
  for (int i = 0; i < count; ++i) {
    const Perf& r = perf[static_cast<size_t>(i)];
    if (r.status != CUDNN_STATUS_SUCCESS || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
        transforms_data(r.algo))
      continue;
    if (dtype == DType::Float32 && r.mathType == CUDNN_TENSOR_OP_MATH) continue;
    out.push_back({static_cast<int>(r.algo), r.mathType});
  }
  return out;
}

// cuDNN's heuristic choices (cudnnGet*_v7, no timing runs), best first; empty when cuDNN has no
// kernel for the problem.
std::vector<Candidate> candidates(Pass pass, cudnnHandle_t h, const Descriptors& d, DType dtype) {
  int max = 0, count = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  switch (pass) {
    case Pass::Forward: {
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max));
      status = cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(),
                                                      d.y.get(), max, &count, perf.data());
      if (status == CUDNN_STATUS_SUCCESS) return usable(perf, count, dtype);
      break;
    }
    case Pass::BackwardData: {
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(max));
      status = cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(),
                                                           d.x.get(), max, &count, perf.data());
      if (status == CUDNN_STATUS_SUCCESS) return usable(perf, count, dtype);
      break;
    }
    case Pass::BackwardFilter: {
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(max));
      status = cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv.get(),
                                                             d.w.get(), max, &count, perf.data());
      if (status == CUDNN_STATUS_SUCCESS) return usable(perf, count, dtype);
      break;
    }
  }
  if (is_unsupported_problem(status)) return {};
  raise_cudnn_error(status, "cudnnGetConvolution*Algorithm_v7");
}

// The workspace `c` needs, or an unsupported-problem status.
cudnnStatus_t workspace_size(Pass pass, cudnnHandle_t h, const Descriptors& d, int algo,
                             size_t* bytes) {
  switch (pass) {
    case Pass::Forward:
      return cudnnGetConvolutionForwardWorkspaceSize(
          h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
          static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
    case Pass::BackwardData:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(
          h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    case Pass::BackwardFilter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

struct Buffers {
  void *x, *w, *y, *workspace;
  size_t workspace_bytes;
  const void *alpha, *beta;
};

cudnnStatus_t execute(Pass pass, cudnnHandle_t h, const Descriptors& d, int algo,
                      const Buffers& b) {
  switch (pass) {
    case Pass::Forward:
      return cudnnConvolutionForward(h, b.alpha, d.x.get(), b.x, d.w.get(), b.w, d.conv.get(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), b.workspace,
                                     b.workspace_bytes, b.beta, d.y.get(), b.y);
    case Pass::BackwardData:
      return cudnnConvolutionBackwardData(h, b.alpha, d.w.get(), b.w, d.y.get(), b.y, d.conv.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo),
                                          b.workspace, b.workspace_bytes, b.beta, d.x.get(), b.x);
    case Pass::BackwardFilter:
      return cudnnConvolutionBackwardFilter(h, b.alpha, d.x.get(), b.x, d.y.get(), b.y,
                                            d.conv.get(),
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                            b.workspace, b.workspace_bytes, b.beta, d.w.get(), b.w);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

// One pass over a batch whose sizes fit cuDNN's ints. `accumulate`: the filter pass adds to w
// (the batch is split). False when cuDNN has no kernel for the problem.
bool run_pass(Pass pass, const Tensor& x, const Tensor& w, const Tensor& y, const ConvParams& p,
              bool accumulate, const char* op) {
  const DType dtype = x.dtype();
  const int device = x.device().index();
  Descriptors d;
  describe(d, x, w, y, p, op);
  cudnnHandle_t h = cudnn_handle(device);
  // alpha and beta are of the compute type: double for float64, float otherwise.
  const double alpha_d = 1, beta_d = accumulate ? 1 : 0;
  const float alpha_f = 1, beta_f = accumulate ? 1 : 0;
  const bool dbl = dtype == DType::Float64;
  std::exception_ptr allocation_failure;
  for (const Candidate& c : candidates(pass, h, d, dtype)) {
    // cuDNN picks kernels by algorithm and math type together; float32 stays on FMA kernels
    // whatever the heuristic reported (it may say DEFAULT, which allows TF32).
    const cudnnMathType_t math = dtype == DType::Float32 ? CUDNN_FMA_MATH : c.math;
    KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), math));
    size_t bytes = 0;
    const cudnnStatus_t sized = workspace_size(pass, h, d, c.algo, &bytes);
    if (is_unsupported_problem(sized)) continue;
    KILN_CUDNN_CHECK(sized);
    Tensor workspace;
    if (bytes > 0) {
      try {
        // From kiln's caching allocator, on the stream the handle runs on.
        workspace =
            empty({static_cast<int64_t>(bytes)}, options_of(DType::UInt8, Device::cuda(device)));
      } catch (const Error&) {
        allocation_failure = std::current_exception();  // the next algorithm may need less
        continue;
      }
    }
    const Buffers b{x.data_ptr(),
                    w.data_ptr(),
                    y.data_ptr(),
                    bytes > 0 ? workspace.data_ptr() : nullptr,
                    bytes,
                    dbl ? static_cast<const void*>(&alpha_d) : &alpha_f,
                    dbl ? static_cast<const void*>(&beta_d) : &beta_f};
    const cudnnStatus_t status = execute(pass, h, d, c.algo, b);
    if (status == CUDNN_STATUS_SUCCESS) return true;
    if (is_unsupported_problem(status)) continue;
    raise_cudnn_error(status, pass == Pass::Forward        ? "cudnnConvolutionForward"
                              : pass == Pass::BackwardData ? "cudnnConvolutionBackwardData"
                                                           : "cudnnConvolutionBackwardFilter");
  }
  // Out of memory for every algorithm cuDNN has: the slow path would not fit either.
  if (allocation_failure) std::rethrow_exception(allocation_failure);
  return false;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// One cuDNN pass of y = conv(x, w) with x, w, y contiguous and of one cuDNN dtype; writes y
// (Forward), x (BackwardData) or w (BackwardFilter). cuDNN's descriptors hold ints, so a batch
// whose tensors exceed INT_MAX elements runs in slices of samples (the filter pass adding up
// theirs). False when cuDNN has no kernel for the problem (nothing useful is written then).
bool run_cudnn(Pass pass, const Tensor& x, const Tensor& w, const Tensor& y, const ConvParams& p,
               const char* op) {
  const int64_t n = x.size(0);
  const int64_t per_sample = std::max(x.numel() / n, y.numel() / n);
  bool fits = fits_int(per_sample) && fits_int(w.numel()) && fits_int(p.groups);
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    fits = fits && fits_int(p.padding[s]) && fits_int(p.stride[s]) && fits_int(p.dilation[s]);
  }
  if (!fits) return false;
  const int64_t chunk = std::min<int64_t>(n, INT_MAX / per_sample);
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t len = std::min(chunk, n - start);
    const Tensor xs = len == n ? x : x.narrow(0, start, len);
    const Tensor ys = len == n ? y : y.narrow(0, start, len);
    if (!run_pass(pass, xs, w, ys, p, pass == Pass::BackwardFilter && start > 0, op)) return false;
  }
  return true;
}

// A transposed convolution's input, extended by output_padding / stride zero samples at the end
// of each spatial dim. cuDNN derives a convolution's output size from its input's, and the
// transposed output's extra output_padding rows only match that when output_padding < stride
// (output_padding may reach the dilation instead); the zeros add nothing to the result.
Tensor extend_for_output_padding(const Tensor& x, const ConvParams& p) {
  DimVector sizes(x.sizes().begin(), x.sizes().end());
  bool extend = false;
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    const int64_t extra = p.output_padding[s] / p.stride[s];
    sizes[static_cast<size_t>(2 + i)] += extra;
    extend = extend || extra > 0;
  }
  if (!extend) return x;
  Tensor out = zeros(sizes, options_of(x.dtype(), x.device()));
  Tensor inner = out;
  for (int64_t i = 0; i < p.spatial(); ++i) inner = inner.narrow(2 + i, 0, x.size(2 + i));
  device_copy(inner, x);
  return out;
}

// The convolution without bias into `out` when it is contiguous of the input's dtype (else into
// a new tensor); undefined when cuDNN has no kernel for it.
Tensor cudnn_convolution(const Tensor& input, const Tensor& weight, const ConvParams& p,
                         const Tensor& out, const char* op) {
  const Tensor y = out.is_contiguous() && out.dtype() == input.dtype()
                       ? out
                       : empty(out.sizes(), options_of(input.dtype(), out.device()));
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const bool ran = p.transposed
                       ? run_cudnn(Pass::BackwardData, y, w, extend_for_output_padding(x, p), p, op)
                       : run_cudnn(Pass::Forward, x, w, y, p, op);
  return ran ? y : Tensor();
}

// ---- the path in kiln ops ----

// Calls f(tap) for every kernel position (one index per spatial dim).
template <typename F>
void for_each_tap(const Tensor& weight, int64_t spatial, F&& f) {
  std::vector<int64_t> tap(static_cast<size_t>(spatial), 0);
  while (true) {
    f(tap);
    int64_t d = spatial - 1;
    for (; d >= 0; --d) {
      const size_t s = static_cast<size_t>(d);
      if (++tap[s] < weight.size(2 + d)) break;
      tap[s] = 0;
    }
    if (d < 0) return;
  }
}

// weight[:, :, tap...]: the [dim 0, dim 1] matrix of one kernel position.
Tensor weight_at(const Tensor& weight, const std::vector<int64_t>& tap) {
  Tensor w = weight;
  for (int64_t t : tap) w = w.select(2, t);
  return w;
}

// `lead` followed by `rest`, as a shape.
DimVector shape_of(std::initializer_list<int64_t> lead, IntList rest) {
  DimVector s(lead);
  for (int64_t v : rest) s.push_back(v);
  return s;
}

// The spatial sizes of a [N, C, spatial...] shape.
IntList spatial_of(IntList sizes) { return IntList(sizes.data() + 2, sizes.size() - 2); }

DimVector ones(int64_t n) { return DimVector(static_cast<size_t>(n), 1); }

// The convolution without bias, in `acc`: out = sum over taps of the tap's slice of the (zero-
// padded) input times the tap's weights, summed over each group's input channels. Transposed,
// each tap's products are added into a strided slice of the output instead (its scatter).
// Memory per tap: batch x out-channels x in-channels-per-group x spatial elements.
Tensor convolution_by_taps(const Tensor& input, const Tensor& weight, const ConvParams& p,
                           IntList out_sizes, DType acc) {
  const int64_t n = input.size(0), groups = p.groups, spatial = p.spatial();
  const TensorOptions opts = options_of(acc, input.device());
  const Tensor x = input.to(acc), w = weight.to(acc);
  const int64_t cig = x.size(1) / groups;  // input channels per group
  if (!p.transposed) {
    const int64_t cog = w.size(0) / groups;
    const IntList out_spatial = spatial_of(out_sizes);
    DimVector padded{n, x.size(1)};
    for (int64_t i = 0; i < spatial; ++i)
      padded.push_back(x.size(2 + i) + 2 * p.padding[static_cast<size_t>(i)]);
    Tensor xp = zeros(padded, opts);
    Tensor inner = xp;
    for (int64_t i = 0; i < spatial; ++i)
      inner = inner.narrow(2 + i, p.padding[static_cast<size_t>(i)], x.size(2 + i));
    inner.copy_(x);
    Tensor sum = zeros(shape_of({n, groups, cog}, out_spatial), opts);
    const DimVector weight_shape = shape_of({1, groups, cog, cig}, ones(spatial));
    const DimVector image_shape = shape_of({n, groups, 1, cig}, out_spatial);
    for_each_tap(w, spatial, [&](const std::vector<int64_t>& tap) {
      Tensor xt = xp;
      for (int64_t i = 0; i < spatial; ++i) {
        const size_t s = static_cast<size_t>(i);
        const int64_t first = tap[s] * p.dilation[s];
        xt = xt.slice(2 + i, first, first + (out_spatial[s] - 1) * p.stride[s] + 1, p.stride[s]);
      }
      sum.add_((xt.reshape(image_shape) * weight_at(w, tap).reshape(weight_shape)).sum(3));
    });
    return sum.reshape(out_sizes);
  }
  // Transposed: weight [C_in, C_out / groups, K...]; output z = i * stride - padding + k *
  // dilation, gathered in a buffer indexed by z + padding and cut to the output afterwards.
  const int64_t cog = w.size(1);
  DimVector buffer{n, groups, cog};
  for (int64_t i = 0; i < spatial; ++i) {
    const size_t s = static_cast<size_t>(i);
    buffer.push_back((x.size(2 + i) - 1) * p.stride[s] + (w.size(2 + i) - 1) * p.dilation[s] + 1 +
                     std::max<int64_t>(0, p.output_padding[s] - p.padding[s]));
  }
  Tensor sum = zeros(buffer, opts);
  const Tensor xg = x.reshape(shape_of({n, groups, 1, cig}, spatial_of(x.sizes())));
  const DimVector weight_shape{groups, cig, cog};
  const DimVector broadcast_shape = shape_of({1, groups, cog, cig}, ones(spatial));
  for_each_tap(w, spatial, [&](const std::vector<int64_t>& tap) {
    const Tensor wt = weight_at(w, tap).reshape(weight_shape).permute({0, 2, 1});
    Tensor target = sum;
    for (int64_t i = 0; i < spatial; ++i) {
      const size_t s = static_cast<size_t>(i);
      const int64_t first = tap[s] * p.dilation[s];
      target =
          target.slice(3 + i, first, first + (x.size(2 + i) - 1) * p.stride[s] + 1, p.stride[s]);
    }
    target.add_((xg * wt.reshape(broadcast_shape)).sum(3));
  });
  Tensor cut = sum;
  for (int64_t i = 0; i < spatial; ++i)
    cut =
        cut.narrow(3 + i, p.padding[static_cast<size_t>(i)], out_sizes[static_cast<size_t>(2 + i)]);
  return cut.reshape(out_sizes);
}

// What the kiln-ops path accumulates in: int64 for integers (wrapping as the CPU's integer
// loops do, once converted back), float32 for the half types.
DType accumulation_dtype(DType dtype) {
  if (!is_floating_point(dtype)) return DType::Int64;
  return dtype == DType::Float64 ? DType::Float64 : DType::Float32;
}

// ---- the ops ----

// bias [C] viewed as [1, C, 1, ...] against an output of rank `ndim`.
Tensor broadcastable_bias(const Tensor& bias, int64_t ndim) {
  DimVector shape = ones(ndim);
  shape[1] = bias.size(0);
  return bias.view(shape);
}

void convolution_cuda(const Stack& args, const std::vector<Tensor>& outs) {
  const char* op = "convolution";
  const Tensor& out = outs[0];
  if (out.numel() == 0) return;
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const DType dtype = args[0].to_tensor().dtype();
  const Tensor input = as_input(args[0].to_tensor(), device, dtype, op);
  const Tensor weight = as_input(args[1].to_tensor(), device, dtype, op);
  const Tensor bias_arg = args[2].to_optional_tensor();
  const Tensor bias = bias_arg.defined() ? as_input(bias_arg, device, dtype, op) : Tensor();
  const ConvParams p = ops::conv::read_params(args, weight.dim() - 2);
  Tensor result;
  if (input.numel() == 0 || weight.numel() == 0) {
    // No products (no input channels, or an empty kernel): every output is the bias, or zero.
    result = zeros(out.sizes(), options_of(dtype, device));
  } else {
    if (cudnn_takes(dtype)) result = cudnn_convolution(input, weight, p, out, op);
    if (!result.defined()) {
      result = convolution_by_taps(input, weight, p, out.sizes(), accumulation_dtype(dtype));
    }
  }
  if (bias.defined()) result.add_(broadcastable_bias(bias.to(result.dtype()), out.dim()));
  if (!result.is_same(out)) device_copy(out, result);
}

// `t` itself when contiguous, else a contiguous tensor like it for finish() to copy back.
Tensor dense_like(const Tensor& t) {
  return t.is_contiguous() ? t : empty(t.sizes(), options_of(t.dtype(), t.device()));
}

void finish(const Tensor& out, const Tensor& result) {
  if (!result.is_same(out)) device_copy(out, result);
}

std::vector<int64_t> all_but_channels(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// A transposed convolution whose output_padding reaches its stride somewhere: the gradients'
// convolutions then see output rows cuDNN's size rule does not (extend_for_output_padding).
bool padding_beyond_stride(const ConvParams& p) {
  if (!p.transposed) return false;
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    if (p.output_padding[s] >= p.stride[s]) return true;
  }
  return false;
}

std::vector<Tensor> convolution_backward_cuda(const Stack& args) {
  const char* op = "convolution_backward";
  static const ops::OpDef& def = ops::OpRegistry::instance().get(op);
  // The meta kernel checks the arguments as the CPU kernel does and makes the gradients the
  // mask asks for, in the dtype and layout the CPU kernel returns (on the input's device).
  std::vector<Tensor> grads = def.custom[static_cast<size_t>(DeviceType::Meta)](args);
  const Tensor& go = args[0].to_tensor();
  const Device device = go.device();
  const DType dtype = go.dtype();
  const Tensor input = as_input(args[1].to_tensor(), device, dtype, op);
  const Tensor weight = as_input(args[2].to_tensor(), device, dtype, op);
  DeviceGuard guard(device.index());
  for (Tensor& g : grads) {
    if (g.defined() && g.device() != device)
      g = empty_strided(g.sizes(), g.strides(), options_of(g.dtype(), device));
  }
  const ConvParams p =
      ops::conv::read_params(Stack(args.begin() + 1, args.begin() + 10), weight.dim() - 2);
  // The gradients still to compute (grad_bias is the sum below).
  std::array<bool, 3> pending{grads[0].defined(), grads[1].defined(), false};
  const bool empty_problem = go.numel() == 0 || input.numel() == 0 || weight.numel() == 0;
  if (cudnn_takes(dtype) && !empty_problem && !padding_beyond_stride(p)) {
    const Tensor x = input.contiguous(), dy = go.contiguous(), w = weight.contiguous();
    if (pending[0]) {
      const Tensor gi = dense_like(grads[0]);
      // Transposed, the input is the equivalent convolution's output: its gradient is the
      // forward convolution of grad_output.
      const bool ran = p.transposed ? run_cudnn(Pass::Forward, dy, w, gi, p, op)
                                    : run_cudnn(Pass::BackwardData, gi, w, dy, p, op);
      if (ran) {
        finish(grads[0], gi);
        pending[0] = false;
      }
    }
    if (pending[1]) {
      const Tensor gw = dense_like(grads[1]);
      const bool ran = p.transposed ? run_cudnn(Pass::BackwardFilter, dy, gw, x, p, op)
                                    : run_cudnn(Pass::BackwardFilter, x, gw, dy, p, op);
      if (ran) {
        finish(grads[1], gw);
        pending[1] = false;
      }
    }
  }
  if (pending[0] || pending[1]) {
    // Integer dtypes, empty problems and what cuDNN refuses: the gradients as convolutions
    // (convolution_backward's decomposition), which run on CUDA through convolution_cuda.
    const std::vector<Tensor> by_convolutions =
        ops::conv::backward_by_convolutions(go, input, weight, p, pending);
    for (size_t i = 0; i < 2; ++i) {
      if (pending[i]) device_copy(grads[i], by_convolutions[i]);
    }
  }
  if (grads[2].defined()) device_copy(grads[2], go.sum(all_but_channels(go.dim())));
  return grads;
}

}  // namespace

KILN_CUDA_REGISTER(convolution_ops) {
  structured("convolution", convolution_cuda);
  custom("convolution_backward", convolution_backward_cuda);
}

}  // namespace kiln::cuda
