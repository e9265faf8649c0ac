// CUDA graphs: stream capture on a side stream, the graph's private pool in the caching
// allocator, instantiation and replay.
#include <kiln/cuda/graph.h>

#include "cuda/caching_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <optional>

namespace kiln::cuda {

struct Graph::State {
  int device = -1;
  uint64_t pool = 0;
  std::optional<Stream> side;    // captured (made at the first capture)
  std::optional<Stream> origin;  // current before the capture, current again after it
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturing = false;

  // Drops the graph and its pool (the pool's blocks still held by tensors return when freed).
  void reset() noexcept {
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    if (pool != 0) release_graph_pool(pool);
    pool = 0;
  }
  // Back to the stream current before the capture; the pool stops taking allocations.
  void leave_capture() noexcept {
    end_pool_allocations(side->handle());
    set_current_stream(*origin);
    capturing = false;
  }
  ~State() {
    if (capturing) {
      cudaGraph_t partial = nullptr;
      (void)cudaStreamEndCapture(side->handle(), &partial);
      if (partial != nullptr) (void)cudaGraphDestroy(partial);
      (void)cudaGetLastError();
      leave_capture();
    }
    reset();
  }
};

Graph::Graph() : state_(std::make_unique<State>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

void Graph::capture_begin() {
  check_available("cuda::Graph::capture_begin");
  State& s = *state_;
  KILN_CHECK(!s.capturing, "cuda::Graph::capture_begin: this graph is capturing already");
  s.reset();
  const int device = current_device();
  if (s.side && s.device != device) s.side.reset();
  s.device = device;
  if (!s.side) s.side = Stream::create(device);
  s.origin = current_stream(device);
  KILN_CHECK(!is_capturing(device),
             "cuda::Graph::capture_begin: the current stream of cuda:{} is being captured already",
             device);
  // The captured stream starts after the work queued before the capture.
  Event queued;
  queued.record(*s.origin);
  KILN_CUDA_CHECK(cudaStreamWaitEvent(s.side->handle(), queued.handle(), 0));
  s.pool = create_graph_pool();
  begin_pool_allocations(s.pool, s.side->handle(), s.origin->handle());
  set_current_stream(*s.side);
  s.capturing = true;
  // Relaxed: allocations (cudaMalloc for the pool) stay allowed while capturing.
  const cudaError_t status = cudaStreamBeginCapture(s.side->handle(), cudaStreamCaptureModeRelaxed);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    s.leave_capture();
    s.reset();
    raise_cuda_error(status, "cudaStreamBeginCapture");
  }
}

void Graph::capture_end() {
  State& s = *state_;
  KILN_CHECK(s.capturing, "cuda::Graph::capture_end: no capture was begun");
  cudaGraph_t graph = nullptr;
  const cudaError_t status = cudaStreamEndCapture(s.side->handle(), &graph);
  s.leave_capture();
  if (status != cudaSuccess) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    s.reset();
    raise_cuda_error(status,
                     "cudaStreamEndCapture (the captured work waited for the device or "
                     "used another stream)");
  }
  s.graph = graph;
  const cudaError_t made = cudaGraphInstantiate(&s.exec, s.graph, 0);
  if (made != cudaSuccess) {
    (void)cudaGetLastError();
    s.exec = nullptr;
    s.reset();
    raise_cuda_error(made, "cudaGraphInstantiate");
  }
}

void Graph::capture_abort() noexcept {
  State& s = *state_;
  if (!s.capturing) return;
  cudaGraph_t partial = nullptr;
  (void)cudaStreamEndCapture(s.side->handle(), &partial);
  if (partial != nullptr) (void)cudaGraphDestroy(partial);
  (void)cudaGetLastError();
  s.leave_capture();
  s.reset();
}

void Graph::replay() {
  const State& s = *state_;
  KILN_CHECK(s.exec != nullptr, "cuda::Graph::replay: nothing was captured");
  DeviceGuard guard(s.device);
  KILN_CUDA_CHECK(cudaGraphLaunch(s.exec, stream_of(s.device)));
}

bool Graph::captured() const { return state_->exec != nullptr; }

bool Graph::owns(const void* ptr) const {
  return state_->pool != 0 && graph_pool_owns(state_->pool, ptr);
}

bool is_capturing(int device) {
  check_available("cuda::is_capturing");
  const int d = device < 0 ? current_device() : device_index(Device::cuda(device));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  KILN_CUDA_CHECK(cudaStreamIsCapturing(stream_of(d), &status));
  return status != cudaStreamCaptureStatusNone;
}

bool is_graph_memory(const void* ptr) { return ptr != nullptr && graph_pool_owns(0, ptr); }

}  // namespace kiln::cuda
