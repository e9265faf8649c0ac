#include "inductor/scheduler.h"

#include "inductor/loop_merging.h"

#include <kiln/capture/logs.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace kiln::inductor {

namespace {

// A nest with fewer iterations of its shared loops than this keeps its kernels apart: fusing
// would leave threads idle.
constexpr int64_t kMinSharedIterations = 16;
// On a GPU a nest of several kernels runs one block per iteration of its shared loops: with fewer
// than this, kernels with more than kSmallIterationWork elements per iteration stay apart (alone,
// a pointwise kernel runs one thread per element). bert's dropout masks fused over its batch of
// 16 took 3.3 ms on 16 of an H100's 132 multiprocessors, against about 0.1 ms apart.
constexpr int64_t kMinGpuSharedIterations = 256;
constexpr int64_t kSmallIterationWork = 1024;

// The kernel with loops of one iteration dropped and its parallel loops first; `parallel` is
// their number.
Kernel normalize(const Kernel& k, size_t* parallel, const SizeFacts& facts) {
  const size_t n = k.ranges.size(), r = k.reduction_ranges.size();
  std::vector<size_t> kept_outputs;
  for (size_t d = 0; d < n; ++d) {
    if (k.ranges[d] != Size(1)) kept_outputs.push_back(d);
  }
  // A pointwise kernel's innermost loop is its vector loop, not a parallel one.
  *parallel = k.kind == Kernel::Kind::Pointwise && !kept_outputs.empty() ? kept_outputs.size() - 1
                                                                         : kept_outputs.size();
  std::vector<Index> to(n + r, constant(0));
  Kernel out = k;
  out.ranges.clear();
  out.reduction_ranges.clear();
  int64_t next = 0;
  for (size_t d : kept_outputs) {
    to[d] = var(next++);
    out.ranges.push_back(k.ranges[d]);
  }
  for (size_t d = 0; d < r; ++d) {
    if (k.reduction_ranges[d] == Size(1)) continue;
    to[n + d] = var(next++);
    out.reduction_ranges.push_back(k.reduction_ranges[d]);
  }
  Sizes sizes = out.ranges;
  sizes.insert(sizes.end(), out.reduction_ranges.begin(), out.reduction_ranges.end());
  // Renamed, then simplified in the loops' ranges (a view's unravelled index becomes affine).
  const auto index = [&to, &sizes, &facts](const Index& e) {
    return simplify_in_ranges(rename_vars(e, to), sizes, facts);
  };
  out.body = rewrite(k.body, index, [](int b) { return b; });
  out.store = index(k.store);
  return out;
}

Size loop_size(const Kernel& k, int64_t v) {
  const auto u = static_cast<size_t>(v);
  if (u < k.ranges.size()) return k.ranges[u];
  if (u < k.ranges.size() + k.reduction_ranges.size())
    return k.reduction_ranges[u - k.ranges.size()];
  return -1;
}

void collect_vars(const Index& e, std::vector<int64_t>& out) {
  if (e->kind == IndexNode::Kind::Var) out.push_back(e->value);
  if (e->a) collect_vars(e->a, out);
  if (e->b) collect_vars(e->b, out);
}

std::string index_text(const Index& e) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 256; ++i) v.push_back(fmt::format("v{}", i));
    return v;
  }();
  return to_cpp(e, names);
}

// Why `reader` cannot join a nest (sharing `shared` loops) holding `writer`, or "" when it can:
// each of its reads of writer's output must be of the element written in the same iteration.
std::string conflict(const Kernel& reader, const Kernel& writer, size_t shared,
                     const SizeFacts& facts) {
  std::string why;
  const std::string store = index_text(writer.store);
  std::vector<int64_t> store_vars;
  collect_vars(writer.store, store_vars);
  for_each_load(reader.body, [&](const ExprNode& load) {
    if (load.buffer != writer.output || !why.empty()) return;
    if (index_text(load.index) != store) {
      why = fmt::format("reads buf{} at {} where it was written at {}", load.buffer,
                        index_text(load.index), store);
      return;
    }
    for (int64_t v : store_vars) {
      if (static_cast<size_t>(v) >= shared &&
          !facts.known_eq(loop_size(reader, v), loop_size(writer, v))) {
        why = fmt::format("reads buf{} over a loop of {} where it was written over {}", load.buffer,
                          loop_size(reader, v), loop_size(writer, v));
      }
    }
  });
  return why;
}

// Largest local buffer (elements per iteration of the shared loops): 64 KiB of float32 on each
// thread's stack; on a GPU, where a block's locals share its 48 KiB of shared memory, 8 KiB.
constexpr int64_t kMaxLocalElements = 16384;
constexpr int64_t kMaxSharedMemoryLocalElements = 2048;

Expr replace_loads(const Expr& e, int buffer, const Index& index) {
  return rewrite(
      e, [](const Index& i) { return i; }, [](int b) { return b; }, buffer, index);
}

// The part of `nest` into whose output the row `writer` (part j) writes can go instead of a
// local array: the last reader of that row, a pointwise kernel over the same loops that reads it
// only at the element it writes itself, into a buffer of the row's dtype that nothing else in
// the nest reads or writes. The row is then written straight into that buffer and updated there
// in place (eager's softmax: exponentials into the output, then scaled there), so the final pass
// works in cache instead of writing cold memory with no computation to overlap.
std::optional<size_t> in_place_reader(const Program& program, const LoopNest& nest, size_t j) {
  const Kernel& writer = nest.parts[j];
  if (writer.kind != Kernel::Kind::Pointwise) return std::nullopt;
  const int b = writer.output;
  std::optional<size_t> last;
  bool same_element = true;
  for (size_t k = j + 1; k < nest.parts.size(); ++k) {
    for_each_load(nest.parts[k].body, [&](const ExprNode& l) {
      if (l.buffer != b) return;
      last = k;
      same_element = same_element && index_text(l.index) == index_text(writer.store);
    });
  }
  if (!last || !same_element) return std::nullopt;
  const Kernel& reader = nest.parts[*last];
  const int o = reader.output;
  if (reader.kind != Kernel::Kind::Pointwise ||
      !program.facts.known_eq(reader.ranges, writer.ranges) || o == b ||
      index_text(reader.store) != index_text(writer.store) ||
      program.buffers[static_cast<size_t>(o)].dtype !=
          program.buffers[static_cast<size_t>(b)].dtype) {
    return std::nullopt;
  }
  for (size_t k = 0; k < nest.parts.size(); ++k) {
    if (k != *last && nest.parts[k].output == o) return std::nullopt;
    bool reads_o = false;
    for_each_load(nest.parts[k].body, [&](const ExprNode& l) { reads_o |= l.buffer == o; });
    if (reads_o) return std::nullopt;
  }
  return last;
}

// On a GPU: the part of `nest` that can compute pointwise row `writer` (part j) itself instead of
// reading it: the only later part reading it, a pointwise kernel over the same loops that reads
// it only at the element it writes, with nothing between them writing what the row reads. Its
// thread then keeps the value in a register instead of a block's shared memory, and a nest of
// pointwise parts over the same loops runs one thread per element (CudaLaunch::Form::Flat)
// instead of one block per iteration of its shared loops.
std::optional<size_t> computing_reader(const Program& program, const LoopNest& nest, size_t j) {
  const Kernel& writer = nest.parts[j];
  if (!program.device.is_cuda() || writer.kind != Kernel::Kind::Pointwise) return std::nullopt;
  const int b = writer.output;
  std::optional<size_t> reader;
  bool same_element = true;
  for (size_t k = j + 1; k < nest.parts.size(); ++k) {
    for_each_load(nest.parts[k].body, [&](const ExprNode& l) {
      if (l.buffer != b) return;
      same_element = same_element && (!reader || *reader == k) &&
                     index_text(l.index) == index_text(writer.store);
      reader = k;
    });
  }
  if (!reader || !same_element) return std::nullopt;
  const Kernel& r = nest.parts[*reader];
  if (r.kind != Kernel::Kind::Pointwise || !program.facts.known_eq(r.ranges, writer.ranges)) {
    return std::nullopt;
  }
  std::set<int> read_by_writer;
  for_each_load(writer.body, [&](const ExprNode& l) { read_by_writer.insert(l.buffer); });
  for (size_t k = j + 1; k <= *reader; ++k) {
    if (read_by_writer.count(nest.parts[k].output) || nest.parts[k].output == b) {
      return std::nullopt;
    }
  }
  return reader;
}

// `e` with every load of `buffer` replaced by `value` (converted to the buffer's dtype, as the
// store converted it).
Expr substitute_loads(const Expr& e, int buffer, const Expr& value) {
  std::map<const ExprNode*, Expr> done;
  std::function<Expr(const Expr&)> visit = [&](const Expr& x) -> Expr {
    if (auto it = done.find(x.get()); it != done.end()) return it->second;
    Expr out;
    if (x->kind == ExprNode::Kind::Load && x->buffer == buffer) {
      out = value->dtype == x->dtype ? value : cast(value, x->dtype);
    } else {
      ExprNode n = *x;
      for (Expr& a : n.args) a = visit(a);
      out = std::make_shared<const ExprNode>(std::move(n));
    }
    return done[x.get()] = out;
  };
  return visit(e);
}

// Buffers written by a kernel of a nest and read only by later kernels of the same nest become
// local to it (an array per thread, indexed by the writer's own loops): they never reach memory.
// A row whose last reader updates it into its own output at each element goes there instead.
void localize(Program& program) {
  std::map<int, std::set<size_t>> readers;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    if (const auto* nest = std::get_if<LoopNest>(&program.steps[i])) {
      for (const Kernel& k : nest->parts) {
        for_each_load(k.body, [&](const ExprNode& l) { readers[l.buffer].insert(i); });
      }
    } else {
      for (int b : buffers_read(program.steps[i])) readers[b].insert(i);
    }
  }
  std::set<int> outputs;
  for (const OutputView& o : program.outputs) outputs.insert(o.buffer);
  for (size_t i = 0; i < program.steps.size(); ++i) {
    auto* nest = std::get_if<LoopNest>(&program.steps[i]);
    if (nest == nullptr || nest->outer.empty() || nest->parts.size() < 2) continue;
    const size_t p = nest->outer.size();
    for (size_t j = 0; j < nest->parts.size(); ++j) {
      Kernel& writer = nest->parts[j];
      const int b = writer.output;
      const auto& r = readers[b];
      if (outputs.count(b) || r.empty() || *r.begin() != i || *r.rbegin() != i) continue;
      if (const auto reader = computing_reader(program, *nest, j)) {
        Kernel& computing = nest->parts[*reader];
        computing.body = substitute_loads(computing.body, b, writer.body);
        program.buffers[static_cast<size_t>(b)].role = Buffer::Role::Local;  // no longer used
        nest->parts.erase(nest->parts.begin() + static_cast<std::ptrdiff_t>(j));
        --j;
        continue;
      }
      Size elements(1);
      Index local = constant(0);
      for (size_t d = writer.ranges.size(); d-- > p;) {
        local = local + var(static_cast<int64_t>(d)) * constant(elements);
        elements = elements * writer.ranges[d];
      }
      // A row of symbolic length is as long as its guards allow.
      const std::optional<int64_t> most = program.facts.upper_bound(elements);
      if (!most || *most > kMaxLocalElements) continue;
      // A row updated in its reader's output stays in memory (the cache), not in a GPU block's
      // shared memory: only local arrays have the smaller limit there.
      const auto reader = in_place_reader(program, *nest, j);
      if (!reader && program.device.is_cuda() && *most > kMaxSharedMemoryLocalElements) continue;
      if (reader) {
        const Kernel& last = nest->parts[*reader];
        const int o = last.output;
        for (size_t k = j + 1; k <= *reader; ++k) {
          nest->parts[k].body = rewrite(
              nest->parts[k].body, [](const Index& e) { return e; },
              [b, o](int x) { return x == b ? o : x; }, b, last.store);
        }
        writer.output = o;
        writer.store = last.store;
        program.buffers[static_cast<size_t>(b)].role = Buffer::Role::Local;  // no longer used
        continue;
      }
      for (size_t k = j + 1; k < nest->parts.size(); ++k) {
        nest->parts[k].body = replace_loads(nest->parts[k].body, b, local);
      }
      writer.store = local;
      program.buffers[static_cast<size_t>(b)].role = Buffer::Role::Local;
      nest->locals.push_back({b, *most});
    }
  }
}

class Scheduler {
 public:
  explicit Scheduler(std::string graph_name) : graph_name_(std::move(graph_name)) {}

  Program run(Program program) {
    facts_ = program.facts;
    on_gpu_ = program.device.is_cuda();
    std::vector<Step> steps;
    for (Step& step : program.steps) {
      if (auto* nest = std::get_if<LoopNest>(&step)) {
        for (const Kernel& k : nest->parts) add(k, steps);
      } else {
        flush(steps);
        if (auto* choice = std::get_if<ExternOrGenerated>(&step))
          schedule_generated(*choice, program);
        steps.push_back(std::move(step));
      }
    }
    flush(steps);
    program.steps = std::move(steps);
    localize(program);
    merge_contiguous_loops(program);
    if (!unfused_.empty()) {
      logs::log(logs::Channel::perf_hints,
                fmt::format("inductor: {}: kernels not fused with the loop nest before them:\n{}",
                            graph_name_, unfused_));
    }
    return program;
  }

 private:
  void add(const Kernel& raw, std::vector<Step>& steps) {
    size_t parallel = 0;
    Kernel k = normalize(raw, &parallel, facts_);
    if (current_) {
      size_t shared = 0;
      const std::string why = fusion_blocker(k, parallel, &shared);
      if (why.empty()) {
        current_->outer.resize(shared);
        current_->parts.push_back(std::move(k));
        return;
      }
      if (why != kIndependent) unfused_ += fmt::format("  buf{}: {}\n", k.output, why);
      flush(steps);
    }
    LoopNest nest;
    nest.outer.assign(k.ranges.begin(), k.ranges.begin() + static_cast<std::ptrdiff_t>(parallel));
    nest.parts.push_back(std::move(k));
    current_ = std::move(nest);
  }

  static constexpr const char* kIndependent = "independent";

  // Why `k` (with `parallel` leading parallel loops) cannot join the current nest, or "" with the
  // number of loops they would share.
  std::string fusion_blocker(const Kernel& k, size_t parallel, size_t* shared_loops) const {
    size_t shared = 0;
    while (shared < current_->outer.size() && shared < parallel &&
           facts_.known_eq(current_->outer[shared], k.ranges[shared])) {
      ++shared;
    }
    // A pointwise kernel over the nest's leading loops alone (layer norm's rstd per row, beside
    // the row's reductions) is computed once per iteration of them, with no loop of its own:
    // its innermost loop need not stay a vector loop, which would cut the nest's shared loops.
    if (k.kind == Kernel::Kind::Pointwise && shared == parallel &&
        k.ranges.size() == parallel + 1 && shared < current_->outer.size() &&
        facts_.known_eq(current_->outer[shared], k.ranges[shared])) {
      ++shared;
    }
    const Size iterations = product(Sizes(
        current_->outer.begin(), current_->outer.begin() + static_cast<std::ptrdiff_t>(shared)));
    // A heuristic: the example sizes decide.
    if (shared == 0 || facts_.hint(iterations) < kMinSharedIterations) {
      bool reads = false;
      for (const Kernel& w : current_->parts) {
        for_each_load(k.body, [&](const ExprNode& l) { reads = reads || l.buffer == w.output; });
      }
      // Unrelated kernels over different loops are not a missed fusion.
      return reads ? fmt::format("its loops [{}] share too few iterations with [{}]",
                                 fmt::join(k.ranges, ", "), fmt::join(current_->outer, ", "))
                   : kIndependent;
    }
    if (on_gpu_ && facts_.hint(iterations) < kMinGpuSharedIterations &&
        (work_per_iteration(k, shared) > kSmallIterationWork ||
         std::any_of(current_->parts.begin(), current_->parts.end(), [&](const Kernel& w) {
           return work_per_iteration(w, shared) > kSmallIterationWork;
         }))) {
      return fmt::format("on a GPU its loops [{}] share too few iterations with [{}] for its work",
                         fmt::join(k.ranges, ", "), fmt::join(current_->outer, ", "));
    }
    for (const Kernel& w : current_->parts) {
      std::string why = conflict(k, w, shared, facts_);
      if (!why.empty()) return why;
    }
    *shared_loops = shared;
    return "";
  }

  // Elements a kernel computes per iteration of its first `shared` loops (at the example sizes).
  int64_t work_per_iteration(const Kernel& k, size_t shared) const {
    Sizes own(k.ranges.begin() + static_cast<std::ptrdiff_t>(std::min(shared, k.ranges.size())),
              k.ranges.end());
    own.insert(own.end(), k.reduction_ranges.begin(), k.reduction_ranges.end());
    return facts_.hint(product(own));
  }

  // A generated alternative's kernels scheduled as a program of their own (fused, their
  // intermediates local where they can be), whose output is the extern call's.
  void schedule_generated(ExternOrGenerated& choice, Program& program) const {
    Program part;
    part.buffers = program.buffers;
    part.facts = program.facts;
    part.num_symbols = program.num_symbols;
    part.device = program.device;
    for (LoopNest& nest : choice.generated) part.steps.emplace_back(std::move(nest));
    for (int b : choice.extern_call.outputs) {
      if (b >= 0) part.outputs.push_back({.buffer = b, .sizes = {}, .strides = {}, .offset = 0});
    }
    part = Scheduler(graph_name_).run(std::move(part));
    choice.generated.clear();
    for (Step& s : part.steps) choice.generated.push_back(std::get<LoopNest>(std::move(s)));
    program.buffers = std::move(part.buffers);  // roles: intermediates made local
  }

  void flush(std::vector<Step>& steps) {
    if (current_) steps.emplace_back(std::move(*current_));
    current_.reset();
  }

  std::string graph_name_;
  SizeFacts facts_;
  bool on_gpu_ = false;
  std::optional<LoopNest> current_;
  std::string unfused_;
};

}  // namespace

Program schedule(Program program, const std::string& graph_name) {
  return Scheduler(graph_name).run(std::move(program));
}

}  // namespace kiln::inductor
