#pragma once
// CUDA graphs (PyTorch's torch.cuda.CUDAGraph): the work the calling thread queued on a device
// between capture_begin and capture_end, replayed later by one launch. A replay does what the
// capture queued, on the same addresses: memory allocated while capturing comes from the graph's
// own pool, which the caching allocator hands to nobody else while the graph lives (blocks freed
// during the capture are reused within it, in stream order). Work that waits for the device
// while capturing (a copy to the host, a synchronize) cannot be captured: capture_end raises.
//
// Random ops captured on the default generator of the device draw fresh numbers at each replay:
// the replay reserves the counters the capture's draws used from the generator, so replay k
// gives the numbers the same calls would give uncaptured at that point of the generator's stream
// (and manual_seed between replays takes effect). The capture itself reserves nothing. A
// Generator passed to a random op, and randperm (it shuffles on the host), cannot be captured.
//
// The header is the same without CUDA; there, every entry point raises "kiln was built without
// CUDA".
#include <cstdint>
#include <memory>

namespace kiln::cuda {

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // Begins capturing the current device's work from this thread: a side stream of the graph's
  // becomes current (the legacy default stream cannot be captured) after waiting for the work
  // queued on the current stream. Raises when a capture is under way.
  void capture_begin();
  // Ends the capture, puts the previous stream back (it waits for the captured stream) and
  // instantiates the graph. Raises kiln::Error with CUDA's reason when the capture was
  // invalidated; the graph is then empty.
  void capture_end();
  // Ends a capture without keeping it (after the captured code raised); never raises.
  void capture_abort() noexcept;
  // Launches the graph on the current stream, after reserving its random_counters() from the
  // device's default generator.
  void replay();
  // Whether a capture ended in a graph that replay() launches.
  bool captured() const;
  // Philox counters the captured random draws use: each replay advances the device's default
  // generator by this many, as the draws would uncaptured.
  uint64_t random_counters() const;
  // Whether `ptr` lies in memory this graph's pool allocated.
  bool owns(const void* ptr) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether the current stream of `device` (-1: the current device) is being captured.
bool is_capturing(int device = -1);
// Whether `ptr` lies in memory that a live graph's pool allocated.
bool is_graph_memory(const void* ptr);

}  // namespace kiln::cuda
