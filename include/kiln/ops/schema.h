#pragma once
// Op schemas in PyTorch's notation:
//   "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
// parsed into argument names, types, defaults and keyword-only / mutability markers, so that
// boxed calls can be checked and completed with defaults, and graphs can print their calls.
#include <kiln/ops/ivalue.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ops {

enum class ArgType {
  Tensor,
  TensorList,
  Int,
  IntList,
  SymInt,
  SymIntList,
  Float,
  FloatList,
  Bool,
  BoolList,  // "bool[3]": held as a list of 0/1 ints (IValue has no list of bools)
  Scalar,
  String,
  DType,
  Device,
};

struct Argument {
  std::string name;
  ArgType type;
  bool optional = false;                 // "Tensor?", "int?"
  bool optional_elements = false;        // "Tensor?[]": undefined tensors in the list mean None
  int64_t list_size = 0;                 // N in "int[N]": a single int stands for N copies
  bool kwarg_only = false;               // after "*"
  bool is_mutable = false;               // "Tensor(a!)": written in place
  std::optional<std::string> alias_set;  // "a" in "Tensor(a)" or "Tensor(a!)"
  std::optional<IValue> default_value;
  std::string type_str;  // as written, for printing
};

struct Schema {
  std::string name;      // "add"
  std::string overload;  // "out" in "add.out"
  std::vector<Argument> arguments;
  std::vector<Argument> returns;

  std::string full_name() const { return overload.empty() ? name : name + "." + overload; }
  std::string str() const;
  // Index of the argument called name, or -1.
  int find(std::string_view arg_name) const;
  bool is_mutating() const;
};

// Parses a schema string; raises kiln::Error with the position of a syntax error.
Schema parse_schema(std::string_view text);

// Checks a boxed call against a schema and fills in defaults for missing trailing arguments;
// raises kiln::Error naming the op and the argument on a mismatch.
void normalize_args(const Schema& schema, Stack& args);

}  // namespace kiln::ops
