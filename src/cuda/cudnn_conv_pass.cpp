#include "cuda/cudnn_conv_pass.h"

#include "cuda/cudnn_conv_problem.h"
#include "cuda/cudnn_graph_conv.h"
#include "cuda/cudnn_handle.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace kiln::cuda {
namespace {

using ops::conv::ConvParams;

// PyTorch's defaults: torch.backends.cudnn.allow_tf32 = True, benchmark = False.
std::atomic<bool> cudnn_tf32{true};
std::atomic<bool> cudnn_timed{false};
std::atomic<bool> cudnn_graph{true};

// The legacy API's descriptors hold ints (the caller checked that the sizes fit).
std::vector<int> to_ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

struct Descriptors {
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
};

// Float32 keeps to FMA kernels unless TF32 is allowed: CUDNN_DEFAULT_MATH lets cuDNN use TF32
// tensor cores (a 10-bit mantissa) on A100 and later, as PyTorch's allow_tf32 does.
cudnnMathType_t requested_math(DType dtype, bool tf32) {
  if (dtype == DType::Float32) return tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  if (dtype == DType::Float64) return CUDNN_DEFAULT_MATH;
  return CUDNN_TENSOR_OP_MATH;  // half types: tensor cores, accumulating in float32
}

void describe(Descriptors& d, const Tensor& x, const Tensor& w, const Tensor& y,
              const ConvParams& p, cudnnMathType_t math, const char* op) {
  const DType dtype = x.dtype();
  const cudnnDataType_t type = cudnn_data_type(dtype, op);
  // Half types accumulate in float32 (cuDNN's PSEUDO_HALF and PSEUDO_BFLOAT16 configurations).
  const cudnnDataType_t compute = dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const std::vector<int64_t> xd64 = cudnn_dims(x), yd64 = cudnn_dims(y);
  const bool nhwc = nhwc_pass(x, w, y);
  const std::vector<int> xd = to_ints(xd64), yd = to_ints(yd64), wd = to_ints(cudnn_dims(w));
  const std::vector<int> xs = to_ints(cudnn_strides(xd64, nhwc)),
                         ys = to_ints(cudnn_strides(yd64, nhwc));
  KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d.x.get(), type, static_cast<int>(xd.size()),
                                              xd.data(), xs.data()));
  KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d.y.get(), type, static_cast<int>(yd.size()),
                                              yd.data(), ys.data()));
  KILN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(d.w.get(), type,
                                              nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
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
  KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), math));
}

// An algorithm cuDNN offers, with the math type it runs in.
struct Candidate {
  int algo;
  cudnnMathType_t math;
};

// FFT and Winograd algorithms transform the data, and their rounding grows with the transform
// and the values' range: resnet18's first convolution came out 3e-9 relative apart from the
// CPU's in float64, and a 3x3 filter gradient 1e-4 apart in float32, where direct sums agree to
// a few ulps. They are left out of the heuristic choice (the default); benchmark mode, which
// asks for the fastest algorithm as PyTorch's does, times them with the others.
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

// The answers that ran their checks (or timing runs) successfully and keep the precision asked
// for: never a conversion of the data to a narrower type, no tensor cores for float32 unless
// TF32 is allowed, transform algorithms only when timed.
template <typename Perf>
std::vector<Candidate> usable(const std::vector<Perf>& perf, int count, DType dtype, bool tf32,
                              bool timed) {
  std::vector<Candidate> out;
  for (int i = 0; i < count; ++i) {
    const Perf& r = perf[static_cast<size_t>(i)];
    if (r.status != CUDNN_STATUS_SUCCESS || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
        (!timed && transforms_data(r.algo)))
      continue;
    if (dtype == DType::Float32 && !tf32 && r.mathType == CUDNN_TENSOR_OP_MATH) continue;
    out.push_back({static_cast<int>(r.algo), r.mathType});
  }
  return out;
}

// cuDNN's choices, best first: its heuristics (cudnnGet*_v7), or its timing runs of every
// algorithm on scratch memory of its own (cudnnFind*, which waits for the device) when
// benchmarking. Empty when cuDNN has no kernel for the problem.
std::vector<Candidate> candidates(ConvPass pass, cudnnHandle_t h, const Descriptors& d, DType dtype,
                                  bool tf32, bool timed) {
  int max = 0, count = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  switch (pass) {
    case ConvPass::Forward: {
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max));
      status = timed ? cudnnFindConvolutionForwardAlgorithm(h, d.x.get(), d.w.get(), d.conv.get(),
                                                            d.y.get(), max, &count, perf.data())
                     : cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(),
                                                              d.y.get(), max, &count, perf.data());
      if (status == CUDNN_STATUS_SUCCESS) return usable(perf, count, dtype, tf32, timed);
      break;
    }
    case ConvPass::BackwardData: {
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(max));
      status =
          timed ? cudnnFindConvolutionBackwardDataAlgorithm(h, d.w.get(), d.y.get(), d.conv.get(),
                                                            d.x.get(), max, &count, perf.data())
                : cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(),
                                                              d.x.get(), max, &count, perf.data());
      if (status == CUDNN_STATUS_SUCCESS) return usable(perf, count, dtype, tf32, timed);
      break;
    }
    case ConvPass::BackwardFilter: {
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(max));
      status =
          timed ? cudnnFindConvolutionBackwardFilterAlgorithm(h, d.x.get(), d.y.get(), d.conv.get(),
                                                              d.w.get(), max, &count, perf.data())
                : cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                      h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), max, &count, perf.data());
      if (status == CUDNN_STATUS_SUCCESS) return usable(perf, count, dtype, tf32, timed);
      break;
    }
  }
  if (is_unsupported_problem(status)) return {};
  raise_cudnn_error(status,
                    timed ? "cudnnFindConvolution*Algorithm" : "cudnnGetConvolution*Algorithm_v7");
}

// The workspace an algorithm needs, or an unsupported-problem status.
cudnnStatus_t workspace_size(ConvPass pass, cudnnHandle_t h, const Descriptors& d, int algo,
                             size_t* bytes) {
  switch (pass) {
    case ConvPass::Forward:
      return cudnnGetConvolutionForwardWorkspaceSize(
          h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
          static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
    case ConvPass::BackwardData:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(
          h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    case ConvPass::BackwardFilter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

// The algorithm that ran for a problem, with its descriptors (math type set) and workspace size.
struct Plan {
  std::shared_ptr<const Descriptors> descriptors;
  int algo;
  size_t workspace_bytes;
};

// Runs one algorithm; the workspace comes from kiln's caching allocator, on the stream the
// handle runs on (an allocation failure raises kiln::Error).
cudnnStatus_t execute(ConvPass pass, cudnnHandle_t h, const Descriptors& d, int algo,
                      size_t workspace_bytes, const Tensor& x, const Tensor& w, const Tensor& y,
                      bool accumulate) {
  Tensor workspace;
  if (workspace_bytes > 0) {
    workspace = empty({static_cast<int64_t>(workspace_bytes)},
                      TensorOptions(DType::UInt8).device(x.device()));
  }
  void* ws = workspace_bytes > 0 ? workspace.data_ptr() : nullptr;
  // alpha and beta are of the compute type: double for float64, float otherwise.
  const double alpha_d = 1, beta_d = accumulate ? 1 : 0;
  const float alpha_f = 1, beta_f = accumulate ? 1 : 0;
  const bool dbl = x.dtype() == DType::Float64;
  const void* alpha = dbl ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = dbl ? static_cast<const void*>(&beta_d) : &beta_f;
  switch (pass) {
    case ConvPass::Forward:
      return cudnnConvolutionForward(h, alpha, d.x.get(), x.data_ptr(), d.w.get(), w.data_ptr(),
                                     d.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws,
                                     workspace_bytes, beta, d.y.get(), y.data_ptr());
    case ConvPass::BackwardData:
      return cudnnConvolutionBackwardData(h, alpha, d.w.get(), w.data_ptr(), d.y.get(),
                                          y.data_ptr(), d.conv.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws,
                                          workspace_bytes, beta, d.x.get(), x.data_ptr());
    case ConvPass::BackwardFilter:
      return cudnnConvolutionBackwardFilter(h, alpha, d.x.get(), x.data_ptr(), d.y.get(),
                                            y.data_ptr(), d.conv.get(),
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws,
                                            workspace_bytes, beta, d.w.get(), w.data_ptr());
  }
  return CUDNN_STATUS_BAD_PARAM;
}

const char* execute_call(ConvPass pass) {
  return pass == ConvPass::Forward        ? "cudnnConvolutionForward"
         : pass == ConvPass::BackwardData ? "cudnnConvolutionBackwardData"
                                          : "cudnnConvolutionBackwardFilter";
}

// The plans of the problems seen.
using PlanCache = ConvPlanCache<Plan>;

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

}  // namespace

bool run_cudnn_pass(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                    const ConvParams& p, bool accumulate, const char* op) {
  const DType dtype = x.dtype();
  const bool tf32 = dtype == DType::Float32 && cudnn_tf32.load();
  const bool timed = cudnn_timed.load();
  ConvProblemKey key = conv_problem_key(pass, x, w, y, p, tf32, timed);
  if (cudnn_graph.load() && run_cudnn_graph_pass(pass, x, w, y, p, accumulate, tf32, timed, key))
    return true;
  cudnnHandle_t h = cudnn_handle(x.device().index());
  if (const std::shared_ptr<const Plan> plan = plan_cache().find(key).value_or(nullptr)) {
    std::optional<cudnnStatus_t> status;
    try {
      status = execute(pass, h, *plan->descriptors, plan->algo, plan->workspace_bytes, x, w, y,
                       accumulate);
    } catch (const Error&) {
      // No memory for its workspace now: choose again below, one that needs less may fit.
    }
    if (status == CUDNN_STATUS_SUCCESS) return true;
    if (status && !is_unsupported_problem(*status)) raise_cudnn_error(*status, execute_call(pass));
  }
  auto d = std::make_shared<Descriptors>();
  describe(*d, x, w, y, p, requested_math(dtype, tf32), op);
  std::exception_ptr allocation_failure;
  for (const Candidate& c : candidates(pass, h, *d, dtype, tf32, timed)) {
    // cuDNN picks kernels by algorithm and math type together; float32 without TF32 stays on FMA
    // kernels whatever the heuristic reported (it may say DEFAULT, which allows TF32).
    const cudnnMathType_t math = dtype == DType::Float32 && !tf32 ? CUDNN_FMA_MATH : c.math;
    KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(d->conv.get(), math));
    size_t bytes = 0;
    const cudnnStatus_t sized = workspace_size(pass, h, *d, c.algo, &bytes);
    if (is_unsupported_problem(sized)) continue;
    KILN_CUDNN_CHECK(sized);
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    try {
      status = execute(pass, h, *d, c.algo, bytes, x, w, y, accumulate);
    } catch (const Error&) {
      allocation_failure = std::current_exception();  // the next algorithm may need less
      continue;
    }
    if (status == CUDNN_STATUS_SUCCESS) {
      plan_cache().store(std::move(key), std::make_shared<const Plan>(Plan{d, c.algo, bytes}));
      return true;
    }
    if (is_unsupported_problem(status)) continue;
    raise_cudnn_error(status, execute_call(pass));
  }
  // Out of memory for every algorithm cuDNN has: the slow path would not fit either.
  if (allocation_failure) std::rethrow_exception(allocation_failure);
  return false;
}

size_t cudnn_conv_plans_cached() { return plan_cache().count() + cudnn_graph_plans_cached(); }

void set_cudnn_graph_api(bool on) { cudnn_graph.store(on); }
bool cudnn_graph_api() { return cudnn_graph.load(); }

void set_cudnn_allow_tf32(bool allow) { cudnn_tf32.store(allow); }
bool cudnn_allow_tf32() { return cudnn_tf32.load(); }
void set_cudnn_benchmark(bool on) { cudnn_timed.store(on); }
bool cudnn_benchmark() { return cudnn_timed.load(); }

}  // namespace kiln::cuda
