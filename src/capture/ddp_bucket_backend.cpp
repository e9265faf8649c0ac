#include "capture/ddp_bucket_backend.h"

#include "graph/parameter_bucket_cuts.h"
#include "graph/split_graph.h"

#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

#include <memory>
#include <mutex>

namespace kiln::capture {

namespace {

size_t parameter_bytes(const graph::ValueMeta& m) {
  size_t n = itemsize(m.dtype);
  for (const SymInt& s : m.sizes) n *= s.is_symbolic() ? 0 : static_cast<size_t>(s.raw());
  return n;
}

// "piece 1: ops [4, 9), 2 parameters (108 bytes): 2.weight, 2.bias".
std::string describe(const graph::GraphPiece& piece, size_t k) {
  std::vector<std::string> names;
  size_t bytes = 0;
  for (const graph::Node* in : piece.graph.inputs()) {
    if (in->role != graph::InputRole::Parameter || !in->outputs[0].requires_grad) continue;
    names.push_back(in->label);
    bytes += parameter_bytes(in->outputs[0]);
  }
  return fmt::format("piece {}: ops [{}, {}), {} parameters ({} bytes){}{}", k, piece.first_op,
                     piece.end_op, names.size(), bytes, names.empty() ? "" : ": ",
                     fmt::join(names, ", "));
}

// The pieces of one graph, each compiled by the inner backend at its first run.
class PiecewiseFunction {
 public:
  PiecewiseFunction(graph::SplitGraph split, NamedBackend inner, BackendContext context)
      : split_(std::move(split)),
        inner_(std::move(inner)),
        context_(std::move(context)),
        compiled_(split_.pieces.size()) {}

  std::vector<Tensor> operator()(std::span<const Tensor> inputs) {
    return graph::run_pieces(split_, inputs, [this](size_t k, std::span<const Tensor> in) {
      return compiled_piece(k, in)(in);
    });
  }

 private:
  CompiledGraph compiled_piece(size_t k, std::span<const Tensor> examples) {
    std::lock_guard lock(mutex_);
    if (!compiled_[k]) {
      BackendContext context = context_;
      context.graph_name =
          fmt::format("{} (piece {} of {})", context_.graph_name, k, split_.pieces.size());
      compiled_[k] =
          run_backend(inner_.name, inner_.backend, split_.pieces[k].graph, examples, context);
    }
    return compiled_[k];
  }

  graph::SplitGraph split_;
  NamedBackend inner_;
  BackendContext context_;
  std::mutex mutex_;
  std::vector<CompiledGraph> compiled_;  // under mutex_
};

}  // namespace

NamedBackend ddp_bucket_backend(NamedBackend inner, std::vector<size_t> bucket_size_limits_bytes) {
  KILN_CHECK(!bucket_size_limits_bytes.empty(),
             "ddp_bucket_backend: expected at least one bucket size limit");
  NamedBackend wrapped;
  wrapped.name = inner.name;
  wrapped.traits = inner.traits;
  wrapped.backend = [inner, limits = std::move(bucket_size_limits_bytes)](
                        const graph::Graph& graph, std::span<const Tensor> example_inputs,
                        const BackendContext& context) -> CompiledGraph {
    graph::SplitGraph split =
        graph::split_graph(graph, graph::parameter_bucket_cuts(graph, limits));
    if (logs::enabled(logs::Channel::ddp)) {
      std::string message = fmt::format(
          "{}: {} piece{} for buckets of {} bytes (then {})", context.graph_name,
          split.pieces.size(), split.pieces.size() == 1 ? "" : "s", limits.front(), limits.back());
      for (size_t k = 0; k < split.pieces.size(); ++k)
        message += "\n" + describe(split.pieces[k], k);
      logs::log(logs::Channel::ddp, message);
    }
    if (split.pieces.size() == 1) {
      return run_backend(inner.name, inner.backend, graph, example_inputs, context);
    }
    auto function = std::make_shared<PiecewiseFunction>(std::move(split), inner, context);
    return [function](std::span<const Tensor> inputs) { return (*function)(inputs); };
  };
  return wrapped;
}

}  // namespace kiln::capture
