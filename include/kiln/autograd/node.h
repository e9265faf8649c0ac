#pragma once
// The backward graph: a Node computes the gradients of a forward op's inputs from the gradients
// of its outputs; its edges point at the nodes that produced those inputs (or at the
// accumulators of leaf tensors).
#include <kiln/core/small_vector.h>
#include <kiln/core/tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::autograd {

class Node;

// Where one gradient goes: input slot input_nr of function.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};

// A hook on a gradient: returns a replacement, or an undefined Tensor to keep the gradient.
using GradHook = std::function<Tensor(const Tensor&)>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(std::vector<Edge> next_edges = {});
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // "MulBackward0"-style name for messages and graph printing.
  virtual std::string name() const = 0;
  // Gradients of the forward inputs (one per next edge) from those of the forward outputs.
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Frees saved tensors once a backward pass without retain_graph has run this node.
  virtual void release_variables() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }

  // What each incoming gradient (one per forward output) must look like.
  struct InputMetadata {
    DimVector sizes;  // encoded SymInts: plain sizes, or symbolic ones under a dynamic trace
    std::vector<SymInt> symbols;  // keeps the symbolic sizes alive (empty for plain sizes)
    SymIntList sym_sizes() const {
      return SymIntList(reinterpret_cast<const SymInt*>(sizes.data()), sizes.size());
    }
    DType dtype = DType::Float32;
    Device device = Device::cpu();
  };
  uint32_t add_input_metadata(const Tensor& t);
  const std::vector<InputMetadata>& input_metadata() const { return input_metadata_; }
  size_t num_inputs() const { return input_metadata_.size(); }

  // Creation order; the engine runs later nodes first among those that are ready.
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Hooks on the gradient arriving at one input slot, run before apply().
  // run_last: after every other hook (retain_grad records the final gradient, as in PyTorch).
  size_t add_pre_hook(uint32_t input_nr, GradHook hook, bool run_last = false);
  bool remove_pre_hook(size_t handle);
  void run_pre_hooks(std::vector<Tensor>& grads) const;

 protected:
  void set_sequence_nr(uint64_t nr) { sequence_nr_ = nr; }
  std::vector<Edge> next_edges_;

 private:
  struct PreHook {
    size_t handle;
    uint32_t input_nr;
    GradHook fn;
  };
  std::vector<InputMetadata> input_metadata_;
  std::vector<PreHook> pre_hooks_;
  std::vector<PreHook> last_hooks_;
  uint64_t sequence_nr_;
};

// The edge a gradient for t flows along: its grad_fn, or its accumulator if it is a leaf that
// requires grad; invalid otherwise.
Edge gradient_edge(const Tensor& t);

}  // namespace kiln::autograd
