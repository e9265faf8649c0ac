#include "inductor/graph_device.h"

namespace kiln::inductor {

std::optional<Device> graph_device(const graph::Graph& graph) {
  std::optional<Device> device;
  for (const auto& n : graph.nodes()) {
    for (const graph::ValueMeta& m : n->outputs) {
      // A number beside GPU tensors stays a 0-dim CPU tensor, as in PyTorch.
      if (m.device.is_cpu() && m.sizes.empty()) {
        continue;
      }
      const Device d = m.device.is_cuda() && !m.device.has_index() ? Device::cuda() : m.device;
      if (device && *device != d) return std::nullopt;
      device = d;
    }
  }
  return device.value_or(Device::cpu());
}

}  // namespace kiln::inductor
