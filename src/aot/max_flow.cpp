#include "aot/max_flow.h"

#include <algorithm>
#include <deque>

namespace kiln::aot {

void FlowNetwork::add_edge(size_t from, size_t to, int64_t capacity) {
  adjacency_[from].push_back(Edge{to, capacity, adjacency_[to].size()});
  adjacency_[to].push_back(Edge{from, 0, adjacency_[from].size() - 1});
}

bool FlowNetwork::levels_from(size_t source, size_t sink) {
  level_.assign(adjacency_.size(), -1);
  level_[source] = 0;
  std::deque<size_t> queue{source};
  while (!queue.empty()) {
    const size_t v = queue.front();
    queue.pop_front();
    for (const Edge& e : adjacency_[v]) {
      if (e.capacity > 0 && level_[e.to] < 0) {
        level_[e.to] = level_[v] + 1;
        queue.push_back(e.to);
      }
    }
  }
  return level_[sink] >= 0;
}

int64_t FlowNetwork::push(size_t v, size_t sink, int64_t limit) {
  if (v == sink) return limit;
  for (size_t& i = next_edge_[v]; i < adjacency_[v].size(); ++i) {
    Edge& e = adjacency_[v][i];
    if (e.capacity <= 0 || level_[e.to] != level_[v] + 1) continue;
    const int64_t pushed = push(e.to, sink, std::min(limit, e.capacity));
    if (pushed > 0) {
      e.capacity -= pushed;
      adjacency_[e.to][e.reverse].capacity += pushed;
      return pushed;
    }
  }
  return 0;
}

int64_t FlowNetwork::max_flow(size_t source, size_t sink) {
  int64_t total = 0;
  while (levels_from(source, sink)) {
    next_edge_.assign(adjacency_.size(), 0);
    while (int64_t pushed = push(source, sink, kInfinite)) {
      total += pushed;
      // An infinite path means no finite cut exists; the caller's network never has one.
      if (total >= kInfinite) return total;
    }
  }
  return total;
}

std::vector<bool> FlowNetwork::source_side(size_t source) const {
  std::vector<bool> seen(adjacency_.size(), false);
  std::deque<size_t> queue{source};
  seen[source] = true;
  while (!queue.empty()) {
    const size_t v = queue.front();
    queue.pop_front();
    for (const Edge& e : adjacency_[v]) {
      if (e.capacity > 0 && !seen[e.to]) {
        seen[e.to] = true;
        queue.push_back(e.to);
      }
    }
  }
  return seen;
}

}  // namespace kiln::aot
