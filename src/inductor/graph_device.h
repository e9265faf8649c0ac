#pragma once
// Which device a graph computes on: the CPU and CUDA have their own code generators, and passes
// written for one library (oneDNN's weight layouts, channels-last convolutions) skip the other.
#include <kiln/core/device.h>
#include <kiln/graph/graph.h>

#include <optional>

namespace kiln::inductor {

// The one device every value of `graph` is on (a CUDA device without an index as cuda:0; the CPU
// for a graph without values), or nullopt when it has several. 0-dim CPU values (numbers beside
// GPU tensors, as PyTorch keeps them) do not count.
std::optional<Device> graph_device(const graph::Graph& graph);

// Whether every value of `graph` is on the CPU.
inline bool on_cpu(const graph::Graph& graph) {
  const std::optional<Device> device = graph_device(graph);
  return device && device->is_cpu();
}

}  // namespace kiln::inductor
