#pragma once
// Maximum flow / minimum cut on a small directed network (Dinic's algorithm), for the
// partitioner's choice of what to save.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kiln::aot {

class FlowNetwork {
 public:
  static constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

  explicit FlowNetwork(size_t vertices) : adjacency_(vertices) {}
  size_t add_vertex() {
    adjacency_.emplace_back();
    return adjacency_.size() - 1;
  }
  void add_edge(size_t from, size_t to, int64_t capacity);
  // The maximum flow from source to sink; afterwards source_side() is the minimum cut's side.
  int64_t max_flow(size_t source, size_t sink);
  // Vertices reachable from the source in the residual network (after max_flow).
  std::vector<bool> source_side(size_t source) const;

 private:
  struct Edge {
    size_t to;
    int64_t capacity;
    size_t reverse;  // index of the reverse edge in adjacency_[to]
  };
  bool levels_from(size_t source, size_t sink);
  int64_t push(size_t v, size_t sink, int64_t limit);

  std::vector<std::vector<Edge>> adjacency_;
  std::vector<int> level_;
  std::vector<size_t> next_edge_;
};

}  // namespace kiln::aot
