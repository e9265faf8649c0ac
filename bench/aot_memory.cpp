// What the aot partitioner saves for the backward, and the activation memory of a training step,
// with the min-cut partition and with "save everything", for BENCHMARKS.md's resnet18 (batch 8,
// 224x224, cross-entropy) and bert (BERT-base sequence classification, batch 4, seq 128, train
// mode with dropout) training steps. Figures come from the partitioned graphs (bytes of values,
// not timings): estimate_peak_bytes walks the forward then the backward freeing each value
// after its last reader. Each workload is reported as traced (ops as captured) and as prims
// (what a code generator sees, where BatchNorm's normalization is pointwise and recomputable).
// Usage: aot_memory [resnet18|bert]...
#include <kiln/aot/aot.h>
#include <kiln/kiln.h>
#include <kiln/models/models.h>

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using kiln::Tensor;

// Captures the training forward (model and loss) as one graph, through a backend that keeps it.
kiln::graph::Graph capture_training_graph(const std::function<Tensor()>& loss) {
  auto kept = std::make_shared<kiln::graph::Graph>();
  auto f = kiln::compile(
      loss, {.backend = kiln::Backend([kept](const kiln::graph::Graph& g, std::span<const Tensor>,
                                             const kiln::BackendContext&) {
               *kept = g.clone();
               return kiln::CompiledGraph(
                   [copy = std::make_shared<kiln::graph::Graph>(g.clone())](
                       std::span<const Tensor> in) { return kiln::graph::interpret(*copy, in); });
             })});
  f();
  return std::move(*kept);
}

void report(const std::string& name, const kiln::graph::Graph& captured, bool decompose) {
  const kiln::aot::JointGraph joint =
      kiln::aot::trace_joint(captured, /*training=*/true, decompose);
  fmt::print("{}{}: {} ops captured, {} in the joint graph\n", name, decompose ? " (as prims)" : "",
             captured.num_ops(), joint.graph.num_ops());
  for (auto p : {kiln::aot::Partitioner::MinCut, kiln::aot::Partitioner::SaveAll}) {
    const kiln::aot::Partition part = kiln::aot::partition(joint, p);
    fmt::print("  {:9} saved {:8.1f} MiB in {:4} values, recomputes {:4} ops, peak {:8.1f} MiB\n",
               p == kiln::aot::Partitioner::MinCut ? "min-cut" : "save-all",
               static_cast<double>(part.saved_bytes) / (1 << 20), part.saved.size(),
               part.recomputed_ops,
               static_cast<double>(kiln::aot::estimate_peak_bytes(part)) / (1 << 20));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> which(argv + 1, argv + argc);
  if (which.empty()) which = {"resnet18", "bert"};
  for (const std::string& w : which) {
    kiln::manual_seed(0);
    if (w == "resnet18") {
      auto model = kiln::models::resnet18();
      model->train();
      const Tensor x = kiln::randn({8, 3, 224, 224});
      const Tensor labels = kiln::randint(0, 1000, {8}, kiln::kInt64);
      const kiln::graph::Graph g = capture_training_graph(
          [&] { return kiln::nn::functional::cross_entropy(model->forward(x), labels); });
      report(w, g, false);
      report(w, g, true);
    } else if (w == "bert") {
      auto model = kiln::models::bert_for_sequence_classification();
      model->train();
      const Tensor ids = kiln::randint(0, model->bert->config.vocab_size, {4, 128}, kiln::kInt64);
      const Tensor labels = kiln::randint(0, 2, {4}, kiln::kInt64);
      const kiln::graph::Graph g = capture_training_graph(
          [&] { return kiln::nn::functional::cross_entropy(model->forward(ids), labels); });
      report(w, g, false);
      report(w, g, true);
    } else {
      fmt::print(stderr, "aot_memory: unknown workload {} (resnet18 or bert)\n", w);
      return 2;
    }
  }
  return 0;
}
