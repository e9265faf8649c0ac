#pragma once
// Builds one program node by node. Every node is executed eagerly as it is added (on float32
// data, without autograd), so the op-family rules can read the concrete sizes, dtypes and values
// of what came before: sizes to make arguments fit, values to keep away from the points where an
// op jumps (floor at integers, a comparison at a tie) or leaves its domain (log of x <= 0).
#include "fuzz/program.h"
#include "fuzz/rng.h"

#include <kiln/core/tensor.h>

#include <functional>
#include <vector>

namespace kiln::fuzz {

struct GeneratorOptions {
  int max_ops = 20;
  int max_rank = 4;
  int64_t max_numel = 256;
};

// Facts about a value's data the rules ask for (computed once per value).
struct ValueFacts {
  bool finite = true;
  double min = 0, max = 0, max_abs = 0;
  double min_abs = 0;                // smallest |x| (distance to 0)
  double min_to_integer = 0.5;       // smallest distance to an integer
  double min_to_half_integer = 0.5;  // smallest distance to k + 0.5 (round's jumps)
};

// Values are numbered in creation order while building (inputs and nodes interleaved, so a rule
// may add an input after picking a node's value without renumbering it); take() renumbers them
// the program's way, inputs first.
class ProgramBuilder {
 public:
  ProgramBuilder(uint64_t seed, GeneratorOptions options);

  Rng& rng() { return rng_; }
  const GeneratorOptions& options() const { return options_; }
  // The program so far, numbered the program's way (for messages).
  Program program() const;
  Program take() const { return program(); }

  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  // By value: the vectors behind them grow while a rule runs.
  Tensor value(int v) const { return values_.at(static_cast<size_t>(v)); }
  ValueFacts facts(int v) const { return facts_.at(static_cast<size_t>(v)); }
  bool is_input(int v) const { return input_of_.at(static_cast<size_t>(v)) >= 0; }
  bool requires_grad(int v) const;
  // Whether any node reads value v so far.
  bool has_users(int v) const;

  // A random value satisfying `accept` (which sees the index and the tensor), or -1. Values with
  // non-finite or huge (> 1e4) elements are never offered: chains on them compare nothing useful.
  int pick(const std::function<bool(int, const Tensor&)>& accept);
  // A new input of these sizes and dtype; float ones require grad at random.
  int add_input(std::vector<int64_t> sizes, DType dtype);
  // Random sizes of this rank (0 and 1 included), within the numel limit.
  std::vector<int64_t> random_sizes(int64_t rank);
  DType random_input_dtype();
  // Appends a node (its arguments numbered as here) and computes its value; an op that eager
  // rejects is the generator's bug and raises kiln::Error naming the node.
  int add_node(Node node);

  // A margin that a value must keep from an op's jumps: relative to its magnitude, so that
  // rounding differences accumulated along a chain cannot cross it.
  double margin(int v) const;

 private:
  ValueFacts facts_of(const Tensor& t) const;

  Rng rng_;
  GeneratorOptions options_;
  uint64_t seed_;
  std::vector<InputSpec> inputs_;
  std::vector<Node> nodes_;    // arguments in creation numbering
  std::vector<int> input_of_;  // per value: its input index, or -1 for a node's value
  std::vector<Tensor> values_;
  std::vector<ValueFacts> facts_;
};

// Small helpers the rules share.
bool is_float(const Tensor& t);
bool is_int(const Tensor& t);  // integral, bool excluded
bool is_bool(const Tensor& t);
// Whether `a` and `b` broadcast together.
bool broadcastable(IntList a, IntList b);
// Whether `from` broadcasts to exactly `to` (what an in-place op's other argument needs).
bool broadcasts_to(IntList from, IntList to);

}  // namespace kiln::fuzz
