#pragma once
// Modes "reduce-overhead" and "max-autotune" on a GPU (PyTorch's CUDA graphs): a compiled
// program's kernels and extern calls are captured into a CUDA graph and later calls replay it,
// one launch instead of one per kernel.
//
// The first call with a set of input sizes runs normally (autotuning, cuDNN's benchmarks and
// lazy initialization happen there) and notes where each input lives; the second is captured.
// An input found at the same address both times (a parameter, a gradient buffer) or in another
// graph's memory (a saved activation that the forward graph wrote) is read in place; others are
// copied into buffers of the graph's before each replay. Host numbers that kernels take by value
// are part of the graph: another value records again. Outputs live in the graph's pool and are
// overwritten by the next replay, so one still held then (the caller kept it) moves to memory of
// its own first. A call whose in-place input moved, whose numbers changed or whose sizes are new
// records again (up to kMaxGraphs sizes, kMaxRecordings recordings each); a program that cannot be
// captured (it waits for the device, or draws on the host: randperm) runs without a graph, said on
// perf_hints. Random ops replay with fresh numbers (cuda/graph_rng.h): each replay, the capturing
// call's included, advances the device's generator as an uncaptured call would.
#include <kiln/core/device.h>
#include <kiln/core/tensor.h>

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace kiln::inductor {

class CudaGraphRunner {
 public:
  using RunProgram = std::function<std::vector<Tensor>(std::span<const Tensor>)>;
  CudaGraphRunner(RunProgram run, std::string name);
  ~CudaGraphRunner();

  std::vector<Tensor> operator()(std::span<const Tensor> inputs);

  static constexpr int kMaxGraphs = 8;
  static constexpr int kMaxRecordings = 4;

 private:
  struct Recorded;
  Recorded* recorded_for(std::span<const Tensor> inputs);
  std::vector<Tensor> record(Recorded& r, std::span<const Tensor> inputs);
  std::vector<Tensor> replay(Recorded& r, std::span<const Tensor> inputs);
  std::vector<Tensor> results_of(const Recorded& r, std::span<const Tensor> inputs) const;
  void disable(std::string why);

  RunProgram run_;
  std::string name_;
  mutable std::mutex mutex_;  // held by the call using the graphs
  std::string disabled_;      // why calls run without a graph (empty while they may use one)
  std::vector<std::unique_ptr<Recorded>> graphs_;  // per signature of the inputs
};

}  // namespace kiln::inductor
