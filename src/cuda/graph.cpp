// CUDA graphs: stream capture on a side stream, the graph's private pool in the caching
// allocator, the graph-safe Philox state of its random draws (graph_rng.h), instantiation and
// replay.
#include <kiln/cuda/graph.h>

#include "cuda/caching_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/graph_rng.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/random.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace kiln::cuda {

namespace {

// The streams being captured by Graphs, with the counters their draws used so far, and the
// devices' free slots. One lock: it is taken per capture and, while something is captured, per
// draw.
struct GraphRngRegistry {
  struct Capture {
    uint64_t* slot = nullptr;
    uint64_t counters = 0;
  };
  // Slots per buffer: each is two words (seed, offset).
  static constexpr size_t kSlotsPerBuffer = 64;

  std::mutex mu;
  std::atomic<size_t> capturing{0};  // captures.size(), read without the lock
  std::map<cudaStream_t, Capture> captures;
  std::map<int, std::vector<uint64_t*>> free_slots;   // per device
  std::map<int, std::vector<uint64_t*>> all_buffers;  // per device: never freed

  uint64_t* take_slot(int device) {
    std::vector<uint64_t*>& free = free_slots[device];
    if (free.empty()) {
      // Never freed: graphs holding slots may be destroyed at exit, after CUDA's teardown.
      void* buffer = nullptr;
      DeviceGuard guard(device);
      KILN_CUDA_CHECK(cudaMalloc(&buffer, kSlotsPerBuffer * 2 * sizeof(uint64_t)));
      std::vector<uint64_t*>& buffers = all_buffers[device];
      buffers.push_back(static_cast<uint64_t*>(buffer));
      // Room for every slot of the device, so that release_graph_rng never allocates.
      free.reserve(buffers.size() * kSlotsPerBuffer);
      for (size_t k = kSlotsPerBuffer; k-- > 0;) {
        free.push_back(static_cast<uint64_t*>(buffer) + 2 * k);
      }
    }
    uint64_t* slot = free.back();
    free.pop_back();
    return slot;
  }
};

GraphRngRegistry& graph_rng_registry() {
  static GraphRngRegistry registry;
  return registry;
}

}  // namespace

uint64_t* begin_graph_rng(int device, cudaStream_t captured) {
  GraphRngRegistry& g = graph_rng_registry();
  std::lock_guard lock(g.mu);
  KILN_CHECK(!g.captures.contains(captured),
             "cuda::Graph::capture_begin: the stream of cuda:{} is being captured by another graph",
             device);
  uint64_t* slot = g.take_slot(device);
  g.captures.emplace(captured, GraphRngRegistry::Capture{slot, 0});
  g.capturing.store(g.captures.size(), std::memory_order_release);
  return slot;
}

uint64_t end_graph_rng(cudaStream_t captured) noexcept {
  GraphRngRegistry& g = graph_rng_registry();
  std::lock_guard lock(g.mu);
  const auto it = g.captures.find(captured);
  if (it == g.captures.end()) return 0;
  const uint64_t counters = it->second.counters;
  g.captures.erase(it);
  g.capturing.store(g.captures.size(), std::memory_order_release);
  return counters;
}

void release_graph_rng(int device, uint64_t* slot) noexcept {
  GraphRngRegistry& g = graph_rng_registry();
  std::lock_guard lock(g.mu);
  g.free_slots[device].push_back(slot);  // within the capacity reserved by take_slot
}

std::optional<kernels::PhiloxArgs> graph_rng_draw(int device, uint64_t counters) {
  GraphRngRegistry& g = graph_rng_registry();
  if (g.capturing.load(std::memory_order_acquire) == 0) return std::nullopt;
  const cudaStream_t stream = stream_of(device);
  std::lock_guard lock(g.mu);
  const auto it = g.captures.find(stream);
  if (it == g.captures.end()) return std::nullopt;
  // The draw's counters follow those of the capture's earlier draws, as they would follow in
  // the generator uncaptured.
  const kernels::PhiloxArgs args{0, it->second.counters, it->second.slot};
  it->second.counters += counters;
  return args;
}

void prepare_graph_rng(int device, uint64_t* slot, uint64_t counters, cudaStream_t stream) {
  kernels::PhiloxArgs args;
  if (auto in_graph = graph_rng_draw(device, counters)) {
    args = *in_graph;  // replayed inside another capture: that graph's replays supply the state
  } else {
    auto [seed, offset] = default_generator(Device::cuda(device)).seed_and_reserve(counters);
    args = {seed, offset};
  }
  kernels::write_philox_state(slot, args, stream);
}

struct Graph::State {
  int device = -1;
  uint64_t pool = 0;
  std::optional<Stream> side;    // captured (made at the first capture)
  std::optional<Stream> origin;  // current before the capture, current again after it
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturing = false;
  uint64_t* rng_slot = nullptr;  // the graph state of its random draws (graph_rng.h)
  uint64_t rng_counters = 0;     // Philox counters its draws use: reserved before each replay

  // Drops the graph, its pool (the pool's blocks still held by tensors return when freed) and its
  // slot.
  void reset() noexcept {
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    if (pool != 0) release_graph_pool(pool);
    pool = 0;
    if (rng_slot != nullptr) release_graph_rng(device, rng_slot);
    rng_slot = nullptr;
    rng_counters = 0;
  }
  // Back to the stream current before the capture; the pool stops taking allocations and the
  // draws stop being counted.
  void leave_capture() noexcept {
    rng_counters = end_graph_rng(side->handle());
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
  try {
    s.rng_slot = begin_graph_rng(device, s.side->handle());
  } catch (...) {
    s.leave_capture();
    s.reset();
    throw;
  }
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
  const cudaStream_t stream = stream_of(s.device);
  // The captured draws' seed and first counter: reserved now, as the same draws would reserve
  // them uncaptured, and written before the graph reads them.
  if (s.rng_counters > 0) prepare_graph_rng(s.device, s.rng_slot, s.rng_counters, stream);
  KILN_CUDA_CHECK(cudaGraphLaunch(s.exec, stream));
}

bool Graph::captured() const { return state_->exec != nullptr; }

uint64_t Graph::random_counters() const { return state_->rng_counters; }

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
