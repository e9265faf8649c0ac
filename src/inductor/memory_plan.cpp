#include "inductor/memory_plan.h"

#include "graph/meta_twins.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <set>

namespace kiln::inductor {

namespace {

constexpr int64_t kAlignment = 64;

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

struct Interval {
  int buffer = -1;
  size_t first = 0, last = 0;  // steps writing and last reading it
  int64_t bytes = 0;
};

}  // namespace

int64_t storage_bytes(IntList sizes, IntList strides, int64_t offset, DType dtype) {
  return graph::storage_extent(sizes, strides, offset) * static_cast<int64_t>(itemsize(dtype));
}

int64_t storage_bytes(const Buffer& b) {
  KILN_CHECK(b.offset.is_constant(), "inductor: {} has the symbolic offset {}", b.name,
             b.offset.str());
  return storage_bytes(IntList(static_ints(b.sizes, "a buffer's storage")),
                       IntList(static_ints(b.strides, "a buffer's storage")), b.offset.value(),
                       b.dtype);
}

MemoryPlan plan_memory(const Program& program) {
  std::vector<int64_t> bytes(program.buffers.size(), 0);
  for (size_t b = 0; b < bytes.size(); ++b) {
    const Buffer& buffer = program.buffers[b];
    if (buffer.role == Buffer::Role::Intermediate) bytes[b] = storage_bytes(buffer);
  }
  return plan_memory(program, bytes);
}

MemoryPlan plan_memory(const Program& program, std::span<const int64_t> bytes) {
  const size_t n = program.buffers.size();
  MemoryPlan plan;
  plan.offset.assign(n, -1);
  std::set<int> outputs;
  for (const OutputView& o : program.outputs) outputs.insert(o.buffer);
  // Lifetimes of the buffers loop nests write: [writing step, last reading step].
  std::vector<Interval> live(n);
  std::vector<bool> planned(n, false);
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const auto* nest = std::get_if<LoopNest>(&program.steps[s]);
    if (nest == nullptr) continue;
    for (const Kernel& k : nest->parts) {
      const Buffer& b = program.buffers[static_cast<size_t>(k.output)];
      if (b.role != Buffer::Role::Intermediate || outputs.count(k.output)) continue;
      planned[static_cast<size_t>(k.output)] = true;
      live[static_cast<size_t>(k.output)] = {k.output, s, s,
                                             aligned(bytes[static_cast<size_t>(k.output)])};
    }
  }
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const auto read = [&](int b) {
      if (b >= 0 && planned[static_cast<size_t>(b)]) {
        Interval& i = live[static_cast<size_t>(b)];
        i.last = std::max(i.last, s);
      }
    };
    if (const auto* nest = std::get_if<LoopNest>(&program.steps[s])) {
      for (int b : nest->args) read(b);
    } else {
      // An extern call, or one with generated alternatives (whose own buffers are not planned).
      for (int b : buffers_read(program.steps[s])) read(b);
    }
  }
  // Greedy by size, largest first: each buffer at the lowest offset free of the buffers already
  // placed whose lifetimes overlap its own.
  std::vector<Interval> order;
  for (size_t b = 0; b < n; ++b) {
    if (planned[b]) order.push_back(live[b]);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Interval& a, const Interval& b) { return a.bytes > b.bytes; });
  std::vector<Interval> placed;
  for (const Interval& i : order) {
    std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) of overlapping placed ones
    for (const Interval& p : placed) {
      if (p.first <= i.last && i.first <= p.last) {
        const int64_t at = plan.offset[static_cast<size_t>(p.buffer)];
        busy.emplace_back(at, at + p.bytes);
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [begin, end] : busy) {
      if (at + i.bytes <= begin) break;
      at = std::max(at, end);
    }
    plan.offset[static_cast<size_t>(i.buffer)] = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + i.bytes);
    placed.push_back(i);
  }
  for (const Interval& i : order) plan.total_bytes += i.bytes;
  return plan;
}

}  // namespace kiln::inductor
