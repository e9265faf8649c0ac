#pragma once
// A fuzz program: a small DAG of registry op calls over generated inputs. It is a plain value
// (copyable, comparable by its printout) so the shrinker can edit it and the reproducer writer
// can print it; executing it calls the ops through the registry, exactly as user code would.
#include <kiln/ops/ivalue.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::fuzz {

// One generated input: its data is drawn from `data_seed` (so dropping another input while
// shrinking keeps this one's values).
struct InputSpec {
  std::vector<int64_t> sizes;
  DType dtype = DType::Float32;
  bool requires_grad = false;
  uint64_t data_seed = 0;
};

// An argument of a node: a value (an input or an earlier node), a list of values, or a literal.
struct Arg {
  enum class Kind { Value, ValueList, Literal };
  Kind kind = Kind::Literal;
  std::vector<int> values;  // value indices (one for Value)
  ops::IValue literal;

  static Arg value(int v) { return {Kind::Value, {v}, {}}; }
  static Arg list(std::vector<int> vs) { return {Kind::ValueList, std::move(vs), {}}; }
  static Arg lit(ops::IValue v) { return {Kind::Literal, {}, std::move(v)}; }
};

// Where an in-place op writes: into its first argument itself, or into a fresh clone of it (the
// node's value is then the clone), or into a narrowed view of that clone (a write through a view).
enum class WriteTarget { Functional, Argument, Clone, CloneNarrow };

struct Node {
  std::string op;  // the registry's full name ("add", "softmax.int", "mul_")
  std::vector<Arg> args;
  int output = 0;  // which output of a multi-output op this node's value is
  WriteTarget target = WriteTarget::Functional;
  int64_t narrow_dim = 0, narrow_start = 0, narrow_length = 0;  // for CloneNarrow
};

// Values are numbered inputs first, then one per node, in order.
struct Program {
  uint64_t seed = 0;
  std::vector<InputSpec> inputs;
  std::vector<Node> nodes;
  std::vector<int> outputs;  // value indices returned by the program

  int num_values() const { return static_cast<int>(inputs.size() + nodes.size()); }
  bool any_requires_grad() const;
  // A readable listing (one line per input and node), also used to tell programs apart.
  std::string str() const;
};

// The program's inputs as tensors: float inputs in `float_dtype` (drawn in float32 and cast, so
// that a float64 run sees the same values), requires_grad set as the specs say.
std::vector<Tensor> make_inputs(const Program& program, DType float_dtype = DType::Float32);

// Runs the program on `inputs` (which it may write, as in-place nodes on arguments do). Every
// float32 dtype literal (a cast's target) and every float32 result (an integer promoted to the
// default dtype) becomes `float_dtype`, so one program runs in float32 and in float64. Returns
// every value (inputs first).
std::vector<Tensor> execute_all(const Program& program, const std::vector<Tensor>& inputs,
                                DType float_dtype = DType::Float32);
// The program's outputs.
std::vector<Tensor> execute(const Program& program, const std::vector<Tensor>& inputs,
                            DType float_dtype = DType::Float32);

// The value of one node, given the values before it (what the generator calls as it builds).
Tensor execute_node(const Node& node, const std::vector<Tensor>& values, DType float_dtype);

// Prints a literal as the C++ expression that builds it (for listings and reproducers).
std::string literal_cpp(const ops::IValue& v);

}  // namespace kiln::fuzz
