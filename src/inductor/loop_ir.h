#pragma once
// The loop-level IR (DESIGN.md §5): what a lowered graph is before code generation.
//   Expr:    a scalar computation at one point of a loop nest: loads from buffers at index
//            expressions, constants, the loop index itself, and pointwise ops.
//   Kernel:  Pointwise (out[store(idx)] = body(idx) over `ranges`) or Reduction (out[store(idx)] =
//            reduce over `reduction_ranges` of body(idx, ridx)).
//   LoopNest: kernels sharing their outermost loops (the scheduler's fusion): per iteration of
//            the shared loops, each kernel runs its own inner loops in turn; one generated
//            function.
//   Extern:  a registry op run by its eager kernel on buffers (GEMM, convolution, random draws,
//            indexing, everything without a loop lowering yet).
//   ExternOrGenerated: an extern call and generated loop nests computing the same outputs
//            (max-autotune, small matmuls); the runtime keeps the faster.
//   Program: buffers and steps in order; what the code generator and the runtime read.
#include "inductor/index_expr.h"

#include <kiln/core/device.h>
#include <kiln/core/dtype.h>
#include <kiln/ops/registry.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::inductor {

class ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

class ExprNode {
 public:
  enum class Kind {
    Load,          // buffer[index]
    Constant,      // a number of `dtype`
    IndexAsValue,  // the index expression as an int64 value (arange)
    Call,          // op(args...): a pointwise function named like the prim ("add", "exp", "where")
    Cast,          // args[0] converted to `dtype`
  };
  Kind kind;
  DType dtype;
  int buffer = -1;    // Load
  Index index;        // Load, IndexAsValue
  double number = 0;  // Constant (integers up to 2^53 exactly; int64 extremes go through `integer`)
  int64_t integer = 0;
  bool is_integer_constant = false;
  std::string op;  // Call
  std::vector<Expr> args;
};

// The pointwise functions (Call ops) that math libraries compute, by libm's names (SLEEF has
// vector versions of each): one argument, and two.
const std::vector<std::string>& unary_math_functions();
const std::vector<std::string>& binary_math_functions();
bool is_math_function(const std::string& op);

// The C++ type generated kernels use for a dtype, or nullptr for one they do not handle.
const char* c_type_or_null(DType d);
// The same; raises kiln::Error for a dtype kernels do not handle.
const char* c_type(DType d);

// float16 and bfloat16: generated code computes them in float and rounds each result to the
// type (as eager's kernels do); only memory holds the 16-bit form.
bool is_half_float(DType d);
// Float32 for a 16-bit float, else d: the dtype a value is computed in.
DType widened(DType d);
// The C++ generator's types: a value's (float for 16-bit floats) and an element's in memory
// (the prelude's kiln_half and kiln_bf16 structs for those).
const char* cpp_value_type(DType d);
const char* cpp_storage_type(DType d);
// A float expression rounded to 16-bit float type `d` by the prelude (kiln_round_bf16/_half).
std::string cpp_rounded_to(DType d, const std::string& value);

Expr load(int buffer, Index index, DType dtype);
Expr constant_of(double value, DType dtype);
Expr integer_constant(int64_t value, DType dtype);
Expr index_value(Index index);
Expr call(std::string op, std::vector<Expr> args, DType dtype);
Expr cast(Expr value, DType dtype);

// The expression with every index rewritten by `index` and every load's buffer by `buffer`
// (shared subexpressions stay shared).
Expr rewrite(const Expr& e, const std::function<Index(const Index&)>& index,
             const std::function<int(int)>& buffer);
// The expression with the loads of `buffer` reading at `at` instead (rewritten before `index`
// and `buffer` apply to them).
Expr rewrite(const Expr& e, const std::function<Index(const Index&)>& index,
             const std::function<int(int)>& buffer, int loads_of, const Index& at);
// Calls `f` with each load's buffer.
void for_each_load(const Expr& e, const std::function<void(const ExprNode&)>& f);

struct Buffer {
  Sizes sizes;
  Sizes strides;
  Size offset = 0;
  DType dtype = DType::Float32;
  // Local: written and read inside one loop nest only; an array per thread of the nest, never
  // allocated by the runtime.
  enum class Role { Input, Intermediate, Local } role = Role::Intermediate;
  int input = -1;  // Role::Input: the graph input's position
  // Role::Input: a 0-dim CPU tensor at offset 0 (a number beside device tensors). A GPU kernel
  // takes its value among its parameters, not its address: no copy to the device per call.
  bool host_scalar = false;
  // Intermediate buffers of kernels are contiguous; extern outputs keep the kernel's layout.
  std::string name;
};

struct Kernel {
  enum class Kind { Pointwise, Reduction } kind = Kind::Pointwise;
  Sizes ranges;            // output loops: variables 0 .. ranges.size()-1
  Sizes reduction_ranges;  // reduction loops: variables after the output ones
  std::string reduction;   // "sum", "prod", "max", "min"
  Expr body;
  int output = -1;
  Index store;  // where in `output` (over the output loop variables)
};

// Kernels run together: `outer` are the shared outermost loops (variables 0 .. outer.size()-1 of
// every part, whose leading ranges equal them); each part then runs its remaining loops.
struct LoopNest {
  Sizes outer;
  std::vector<Kernel> parts;
  std::string function;   // the generated function's name (identical nests share one)
  std::vector<int> args;  // the buffers the function takes, in order
  // Buffers local to the nest (Role::Local): each iteration of the shared loops has its own,
  // indexed by the writing kernel's own loops. `elements` is its size's upper bound (a row of a
  // symbolic length is as long as the guards allow).
  struct LocalBuffer {
    int buffer = -1;
    int64_t elements = 0;
  };
  std::vector<LocalBuffer> locals;
  // max-autotune: other functions computing the same nest (kernel_variants.h), each under its
  // variant's label; the runtime times them against `function` at the first call.
  struct Variant {
    std::string label, function;
  };
  std::vector<Variant> variants;
};

// An op the runtime calls with tensors made from buffers (as strided views where a view was
// folded); its outputs become new buffers.
struct ExternCall {
  const ops::OpDef* op = nullptr;
  ops::Stack args;  // tensor slots left undefined, filled from `inputs`
  struct Input {
    int arg = 0, element = -1;  // as graph::TensorUse
    int buffer = -1;
    Sizes sizes, strides;
    Size offset = 0;
  };
  std::vector<Input> inputs;
  std::vector<int> outputs;  // one buffer per op output (-1: undefined output)
};

// Two ways to compute the outputs of an extern call (max-autotune: small matmuls, see
// gemm_alternative.h): the call itself, or generated loop nests in order, the last of which writes
// the call's output buffers (earlier ones write buffers read only inside `generated`). Neither
// writes planned memory: the runtime allocates their buffers per call.
struct ExternOrGenerated {
  ExternCall extern_call;
  std::vector<LoopNest> generated;
};

using Step = std::variant<LoopNest, ExternCall, ExternOrGenerated>;

// The buffers a step reads: its kernels' loads (the buffers of a generated alternative's nests
// included) and its extern call's inputs, each once per read (repeats possible).
std::vector<int> buffers_read(const Step& step);
// The loop nests of a step: the nest itself, or a generated alternative's nests.
std::vector<const LoopNest*> loop_nests(const Step& step);
std::vector<LoopNest*> loop_nests(Step& step);
// The extern call of a step (an ExternCall, or an alternative's extern way), or nullptr.
const ExternCall* extern_call(const Step& step);

struct Program;
// A buffer a loop nest's generated function takes: every buffer its kernels read or write but the
// nest's local ones, in increasing order, with the dtype it is accessed as (a written buffer's
// own, a read-only one's loads') and whether the nest writes it.
struct NestArgument {
  int buffer = -1;
  DType dtype = DType::Float32;
  bool written = false;
};
std::vector<NestArgument> nest_arguments(const Program& program, const LoopNest& nest);

// A graph output: a view (sizes, strides, offset) of a buffer.
struct OutputView {
  int buffer = -1;
  Sizes sizes, strides;
  Size offset = 0;
};

struct Program {
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<OutputView> outputs;
  size_t num_inputs = 0;
  // Symbolic sizes: what is known of the compilation's symbols, and how many there are (kernels
  // and the runtime take their values per call, bound from the inputs' sizes).
  SizeFacts facts;
  size_t num_symbols = 0;
  bool is_symbolic() const { return num_symbols > 0; }
  // Where the buffers live and the kernels run (the graph's device).
  Device device = Device::cpu();
};

}  // namespace kiln::inductor
