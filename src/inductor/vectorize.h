#pragma once
// Explicitly vectorized innermost loops for the C++ code generator (DESIGN.md §5): the loop body
// written with vec_prelude()'s Vec/Mask types, stepping kiln_vec_width_float (or _double) lanes,
// followed by the caller's scalar loop for the remainder. The text is one block at loop.indent:
// the vector loop (its hoisted values and its bound <var>_vec_end declared inside), then the
// scalar tail verbatim.
//
// A body vectorizes when all its values are float32 (or all float64), except bool values made by
// comparisons or loaded from bool buffers and used by where, logical ops or a bool store; every
// load is contiguous (stride 1 along the inner variable: one vector load) or invariant (stride 0:
// a scalar load, broadcast, hoisted out of the loop); the store is contiguous. Anything else
// (integers, index values, strided or gathered loads) gives nullopt: the caller emits its scalar
// `omp simd` loop instead.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inductor/loop_ir.h"

namespace kiln::inductor {

struct InnerLoop {
  std::vector<std::string> names;  // C++ name of each loop variable, by variable number ("i0"...)
  int64_t var = 0;                 // the innermost loop's variable number
  std::string begin, end;          // C++ expressions: the loop runs var over [begin, end)
  std::string indent;              // indentation of the loop statement
  // Reductions of float32 bodies into a "double" accumulator: true accumulates sums and products
  // in double lanes (two vectors per float vector; the precision of the scalar loop, which adds
  // each value to a double), false in float lanes (faster, rounding errors grow with the length).
  bool wide_float_accumulation = false;
};

// Writes the scalar loop of the same body over var in [tail_begin, end) (tail_begin is a C++
// expression); the vectorized loops end with it.
using ScalarTail = std::function<std::string(const std::string& tail_begin)>;

// A pointwise loop: for var in [begin, end): b<out_buffer>[store] = body (cast to out_dtype).
// Buffers are the pointers b<N> the caller declared. nullopt when the body cannot be vectorized.
// `stream`: the vector stores are streaming stores (streaming_stores.h; float and double outputs
// only), which the caller fences.
std::optional<std::string> vectorized_store_loop(const InnerLoop& loop, const Expr& body,
                                                 int out_buffer, DType out_dtype,
                                                 const Index& store, const ScalarTail& scalar_tail,
                                                 bool stream = false);

// A reduction's innermost loop: combines body over var in [begin, end) into the scalar variable
// `acc` of C++ type acc_type ("double" for float/double sums and products, else the element
// type); `reduction` is "sum", "prod", "max" or "min" (NaN-propagating). Lanes accumulate in the
// body's type (see InnerLoop::wide_float_accumulation), are combined as a tree in acc_type and
// folded into acc; the scalar tail then continues accumulating into acc. nullopt when the body
// cannot be vectorized.
// A value the reduction loop also stores, each iteration (b<buffer>[store] = value): a pointwise
// kernel fused into the reduction reading it (softmax's exp row and its sum in one pass). The
// reduction's body shares value's nodes.
struct AlsoStore {
  Expr value;
  int buffer = -1;
  DType dtype = DType::Float32;
  Index store;
};

std::optional<std::string> vectorized_reduction_loop(
    const InnerLoop& loop, const Expr& body, const std::string& reduction, const std::string& acc,
    const std::string& acc_type, const ScalarTail& scalar_tail, const AlsoStore* also = nullptr);

}  // namespace kiln::inductor
