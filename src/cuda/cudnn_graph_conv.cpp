#include "cuda/cudnn_graph_conv.h"

#include "cuda/cudnn_conv_problem.h"
#include "cuda/cudnn_handle.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln::cuda {
namespace {

using ops::conv::ConvParams;

// PyTorch's torch.backends.cudnn.benchmark_limit: how many engine configurations a benchmarking
// call builds and times.
constexpr size_t kTimedPlans = 10;
// Timed runs per plan, after one that warms it up.
constexpr int kTimedRuns = 3;

// Unique ids of the three operands in the operation graph and the variant pack.
constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

[[noreturn]] void raise_backend_error(cudnnStatus_t status, const char* call, int attribute) {
  const std::string what = fmt::format("{} (attribute {})", call, attribute);
  raise_cudnn_error(status, what.c_str());
}

// An owned descriptor of the graph API.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    KILN_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d));
    owned_.reset(d);
  }
  cudnnBackendDescriptor_t get() const { return owned_.get(); }

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const void* values) {
    const cudnnStatus_t status = cudnnBackendSetAttribute(get(), name, type, count, values);
    if (status != CUDNN_STATUS_SUCCESS) {
      raise_backend_error(status, "cudnnBackendSetAttribute", static_cast<int>(name));
    }
  }
  void set(cudnnBackendAttributeName_t name, const BackendDescriptor& d) {
    const cudnnBackendDescriptor_t raw = d.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  void set(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values) {
    set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data());
  }
  void set(cudnnBackendAttributeName_t name, int64_t value) {
    set(name, CUDNN_TYPE_INT64, 1, &value);
  }
  cudnnStatus_t finalize() { return cudnnBackendFinalize(get()); }

 private:
  struct Destroy {
    void operator()(void* d) const noexcept { (void)cudnnBackendDestroyDescriptor(d); }
  };
  std::unique_ptr<void, Destroy> owned_;
};

// A pointer's alignment in bytes, up to the 16 that vectorized kernels need (a batch slice or a
// view may start anywhere); told to cuDNN, which picks kernels that read no wider.
int64_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  int64_t alignment = 16;
  while (alignment > 1 && address % static_cast<uintptr_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

BackendDescriptor tensor_descriptor(int64_t uid, const Tensor& t, bool nhwc) {
  BackendDescriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = cudnn_data_type(t.dtype(), "convolution");
  const std::vector<int64_t> dims = cudnn_dims(t);
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
  d.set(CUDNN_ATTR_TENSOR_STRIDES, cudnn_strides(dims, nhwc));
  d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
  d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, alignment_of(t.data_ptr()));
  KILN_CUDNN_CHECK(d.finalize());
  return d;
}

BackendDescriptor convolution_descriptor(const ConvParams& p, DType dtype) {
  BackendDescriptor d(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  // Half types accumulate in float32, as the legacy API's PSEUDO_HALF configurations do.
  const cudnnDataType_t compute = dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  std::vector<int64_t> pad, stride, dilation;
  if (p.spatial() == 1) {  // the 1-d convolution's leading spatial dim of 1
    pad.push_back(0);
    stride.push_back(1);
    dilation.push_back(1);
  }
  pad.insert(pad.end(), p.padding.begin(), p.padding.end());
  stride.insert(stride.end(), p.stride.begin(), p.stride.end());
  dilation.insert(dilation.end(), p.dilation.begin(), p.dilation.end());
  d.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  d.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  d.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, static_cast<int64_t>(pad.size()));
  d.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, dilation);
  d.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, stride);
  d.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, pad);
  d.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, pad);
  KILN_CUDNN_CHECK(d.finalize());
  return d;
}

// The attributes of one pass's operation: its descriptor type, then alpha, beta, the
// convolution and the three operands in the order x, w, y.
struct OperationAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t alpha, beta, conv, x, w, y;
};

OperationAttributes operation_attributes(ConvPass pass) {
  switch (pass) {
    case ConvPass::Forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y};
    case ConvPass::BackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY};
    case ConvPass::BackwardFilter:
      break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY};
}

// The operation graph of one pass, with the descriptors it refers to (kept alive with it).
struct OperationGraph {
  std::vector<BackendDescriptor> parts;
  std::unique_ptr<BackendDescriptor> graph;
};

// The graph, or null when cuDNN's graph API does not take the problem.
std::shared_ptr<OperationGraph> operation_graph(ConvPass pass, cudnnHandle_t h, const Tensor& x,
                                                const Tensor& w, const Tensor& y,
                                                const ConvParams& p, bool accumulate) {
  auto g = std::make_shared<OperationGraph>();
  const bool nhwc = nhwc_pass(x, w, y);
  g->parts.push_back(tensor_descriptor(kX, x, nhwc));
  g->parts.push_back(tensor_descriptor(kW, w, nhwc));
  g->parts.push_back(tensor_descriptor(kY, y, nhwc));
  g->parts.push_back(convolution_descriptor(p, x.dtype()));
  const OperationAttributes a = operation_attributes(pass);
  BackendDescriptor op(a.type);
  // alpha and beta are of the compute type: double for float64, float otherwise.
  if (x.dtype() == DType::Float64) {
    const double alpha = 1, beta = accumulate ? 1 : 0;
    op.set(a.alpha, CUDNN_TYPE_DOUBLE, 1, &alpha);
    op.set(a.beta, CUDNN_TYPE_DOUBLE, 1, &beta);
  } else {
    const float alpha = 1, beta = accumulate ? 1 : 0;
    op.set(a.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    op.set(a.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  }
  op.set(a.conv, g->parts[3]);
  op.set(a.x, g->parts[0]);
  op.set(a.w, g->parts[1]);
  op.set(a.y, g->parts[2]);
  cudnnStatus_t status = op.finalize();
  if (is_unsupported_problem(status)) return nullptr;
  KILN_CUDNN_CHECK(status);
  g->graph = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  g->graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  const cudnnBackendDescriptor_t ops[] = {op.get()};
  g->graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, ops);
  g->parts.push_back(std::move(op));
  status = g->graph->finalize();
  if (is_unsupported_problem(status)) return nullptr;
  KILN_CUDNN_CHECK(status);
  return g;
}

// The engine configurations cuDNN's heuristics in `mode` rank for the graph, best first (none
// where the mode has nothing for it).
std::vector<BackendDescriptor> engine_configs(const OperationGraph& g,
                                              cudnnBackendHeurMode_t mode) {
  BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *g.graph);
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  // A mode with nothing for the graph may fail in any of several ways (the fallback mode has no
  // list for some data types): the other mode, then the legacy API, is tried.
  if (heuristics.finalize() != CUDNN_STATUS_SUCCESS) return {};
  int64_t count = 0;
  if (cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS)
    return {};
  std::vector<BackendDescriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  if (count == 0) return configs;
  int64_t got = 0;
  KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                            raw.data()));
  configs.erase(configs.begin() + std::clamp<int64_t>(got, 0, count), configs.end());
  return configs;
}

// What an engine configuration's engine says of itself.
struct EngineNotes {
  std::vector<cudnnBackendNumericalNote_t> numerical;
  std::vector<cudnnBackendBehaviorNote_t> behavior;
  bool has(cudnnBackendNumericalNote_t n) const {
    return std::find(numerical.begin(), numerical.end(), n) != numerical.end();
  }
  bool has(cudnnBackendBehaviorNote_t n) const {
    return std::find(behavior.begin(), behavior.end(), n) != behavior.end();
  }
};

// An engine's notes of one kind (at most `most` of them).
template <typename Note>
std::vector<Note> notes_of(const BackendDescriptor& engine, cudnnBackendAttributeName_t name,
                           cudnnBackendAttributeType_t type, int64_t most) {
  std::vector<Note> notes(static_cast<size_t>(most));
  int64_t count = 0;
  KILN_CUDNN_CHECK(cudnnBackendGetAttribute(engine.get(), name, type, most, &count, notes.data()));
  notes.resize(static_cast<size_t>(std::clamp<int64_t>(count, 0, most)));
  return notes;
}

EngineNotes engine_notes(const BackendDescriptor& config) {
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  int64_t count = 0;
  KILN_CUDNN_CHECK(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &raw));
  return {notes_of<cudnnBackendNumericalNote_t>(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                                CUDNN_TYPE_NUMERICAL_NOTE,
                                                CUDNN_NUMERICAL_NOTE_TYPE_COUNT),
          notes_of<cudnnBackendBehaviorNote_t>(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                               CUDNN_TYPE_BEHAVIOR_NOTE,
                                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT)};
}

// Whether an engine keeps the precision asked for, as PyTorch's filter and the legacy path's
// choice do: no inputs converted to a narrower type; for float32 and float64 no reduction in a
// narrower one (a float32 filter gradient over 512 products came out 1.1e-4 relative apart from
// the CPU's, ten times a float32 sum's rounding) and no tensor cores unless TF32 is allowed; and
// -- unless timed -- no FFT or Winograd transform, whose rounding grows with the values' range.
bool keeps_precision(const EngineNotes& notes, DType dtype, bool tf32, bool timed) {
  if (notes.has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) return false;
  const bool wide = dtype == DType::Float32 || dtype == DType::Float64;
  if (wide && notes.has(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)) return false;
  if (dtype == DType::Float32 && !tf32 && notes.has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) return false;
  if (timed) return true;
  return !notes.has(CUDNN_NUMERICAL_NOTE_FFT) && !notes.has(CUDNN_NUMERICAL_NOTE_WINOGRAD) &&
         !notes.has(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4) &&
         !notes.has(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6) &&
         !notes.has(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13);
}

// An execution plan with what it refers to.
struct GraphPlan {
  std::shared_ptr<OperationGraph> graph;
  BackendDescriptor config;
  BackendDescriptor plan;
  int64_t workspace_bytes;
};

// The plan of one engine configuration, or null when it does not build for the problem.
std::shared_ptr<GraphPlan> build_plan(cudnnHandle_t h, std::shared_ptr<OperationGraph> graph,
                                      BackendDescriptor config) {
  BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
  // Any failure here is the engine's (a configuration the problem's sizes or alignment rule out,
  // or a kernel this architecture lacks): the next one is tried.
  if (plan.finalize() != CUDNN_STATUS_SUCCESS) return nullptr;
  int64_t bytes = 0, count = 0;
  KILN_CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &count, &bytes));
  return std::make_shared<GraphPlan>(
      GraphPlan{std::move(graph), std::move(config), std::move(plan), std::max<int64_t>(bytes, 0)});
}

// Runs a plan on x, w, y; the workspace comes from kiln's caching allocator on the stream the
// handle runs on (an allocation failure raises kiln::Error).
cudnnStatus_t execute_plan(cudnnHandle_t h, const GraphPlan& plan, const Tensor& x, const Tensor& w,
                           const Tensor& y) {
  Tensor workspace;
  void* ws = nullptr;
  if (plan.workspace_bytes > 0) {
    workspace = empty({plan.workspace_bytes}, TensorOptions(DType::UInt8).device(x.device()));
    ws = workspace.data_ptr();
  }
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const std::array<int64_t, 3> uids{kX, kW, kY};
  const std::array<void*, 3> pointers{x.data_ptr(), w.data_ptr(), y.data_ptr()};
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
  KILN_CUDNN_CHECK(pack.finalize());
  return cudnnBackendExecute(h, plan.plan.get(), pack.get());
}

// The tensor a pass writes.
const Tensor& written_operand(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y) {
  return pass == ConvPass::Forward ? y : pass == ConvPass::BackwardData ? x : w;
}

// Milliseconds per run of a plan (after one run that warms it up), or nullopt when it fails to
// run: no memory for its workspace, or a failure the engine reports at run time.
std::optional<float> time_plan(cudnnHandle_t h, const GraphPlan& plan, const Tensor& x,
                               const Tensor& w, const Tensor& y) {
  try {
    if (execute_plan(h, plan, x, w, y) != CUDNN_STATUS_SUCCESS) return std::nullopt;
    Event start(true), end(true);
    start.record();
    for (int i = 0; i < kTimedRuns; ++i) {
      if (execute_plan(h, plan, x, w, y) != CUDNN_STATUS_SUCCESS) return std::nullopt;
    }
    end.record();
    end.synchronize();
    return start.elapsed_ms(end) / kTimedRuns;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The plan to run for a problem: the first configuration of cuDNN's heuristics (then its
// fallback list) that keeps the precision and builds, or -- timed -- the fastest of the first
// kTimedPlans that build. Engines compiled at run time (NVRTC, seconds per plan) come last.
// Null when none builds.
std::shared_ptr<const GraphPlan> choose_plan(ConvPass pass, cudnnHandle_t h, const Tensor& x,
                                             const Tensor& w, const Tensor& y, const ConvParams& p,
                                             bool accumulate, bool tf32, bool timed) {
  const std::shared_ptr<OperationGraph> graph = operation_graph(pass, h, x, w, y, p, accumulate);
  if (!graph) return nullptr;
  std::vector<BackendDescriptor> precompiled, compiled_at_run_time;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    for (BackendDescriptor& config : engine_configs(*graph, mode)) {
      const EngineNotes notes = engine_notes(config);
      if (!keeps_precision(notes, x.dtype(), tf32, timed)) continue;
      (notes.has(CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) ? compiled_at_run_time : precompiled)
          .push_back(std::move(config));
    }
  }
  for (std::vector<BackendDescriptor>* tier : {&precompiled, &compiled_at_run_time}) {
    std::vector<std::shared_ptr<GraphPlan>> built;
    for (BackendDescriptor& config : *tier) {
      if (std::shared_ptr<GraphPlan> plan = build_plan(h, graph, std::move(config))) {
        built.push_back(std::move(plan));
        if (!timed || built.size() == kTimedPlans) break;
      }
    }
    if (built.empty()) continue;
    if (!timed) return built.front();
    // Timing runs write a scratch copy of the written operand.
    const Tensor& out = written_operand(pass, x, w, y);
    const Tensor scratch =
        empty_strided(out.sizes(), out.strides(), TensorOptions(out.dtype()).device(out.device()));
    const Tensor& tx = pass == ConvPass::BackwardData ? scratch : x;
    const Tensor& tw = pass == ConvPass::BackwardFilter ? scratch : w;
    const Tensor& ty = pass == ConvPass::Forward ? scratch : y;
    std::shared_ptr<GraphPlan> fastest;
    float best = std::numeric_limits<float>::infinity();
    for (std::shared_ptr<GraphPlan>& plan : built) {
      const std::optional<float> ms = time_plan(h, *plan, tx, tw, ty);
      if (ms && *ms < best) {
        best = *ms;
        fastest = plan;
      }
    }
    if (fastest) return fastest;
  }
  return nullptr;
}

// The plans chosen, by problem, accumulation, operand alignments and handle.
using GraphPlanCache = ConvPlanCache<GraphPlan>;

GraphPlanCache& graph_plan_cache() {
  static GraphPlanCache cache;
  return cache;
}

}  // namespace

bool run_cudnn_graph_pass(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                          const ConvParams& p, bool accumulate, bool tf32, bool timed,
                          const ConvProblemKey& problem) {
  cudnnHandle_t h = cudnn_handle(x.device().index());
  ConvProblemKey key = problem;
  key.push_back(accumulate);
  for (const Tensor* t : {&x, &w, &y}) key.push_back(alignment_of(t->data_ptr()));
  // Plans are built with a handle, and a handle is one thread's (cudnn_handle.h).
  key.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(h)));
  std::optional<std::shared_ptr<const GraphPlan>> cached = graph_plan_cache().find(key);
  if (!cached) {
    cached = choose_plan(pass, h, x, w, y, p, accumulate, tf32, timed);
    graph_plan_cache().store(key, *cached);
  }
  if (*cached == nullptr) return false;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  try {
    status = execute_plan(h, **cached, x, w, y);
  } catch (const Error&) {
    return false;  // no memory for its workspace now: the legacy API may find an algorithm that
                   // fits
  }
  if (status == CUDNN_STATUS_SUCCESS) return true;
  raise_cudnn_error(status, "cudnnBackendExecute");
}

size_t cudnn_graph_plans_cached() { return graph_plan_cache().count(true); }
size_t cudnn_graph_problems_without_plan() { return graph_plan_cache().count(false); }

}  // namespace kiln::cuda
