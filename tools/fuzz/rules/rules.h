#pragma once
// The generator's op families. Each rule proposes nodes of one family: it picks arguments whose
// sizes, dtypes and values make the op valid (and keep eager and compiled code comparable) and
// appends them; it returns false, adding nothing, when no value fits. One file per family.
#include "fuzz/builder.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::fuzz {

struct Rule {
  std::string name;  // family/op, for statistics
  double weight = 1;
  std::function<bool(ProgramBuilder&)> propose;
};

std::vector<Rule> unary_rules();          // pointwise unary ops and activations
std::vector<Rule> binary_rules();         // pointwise binary ops with broadcasting, comparisons
std::vector<Rule> reduction_rules();      // sum/mean/amax/var/... with dims and keepdim, scans
std::vector<Rule> view_rules();           // reshape/view/permute/transpose/slice/expand/...
std::vector<Rule> matmul_rules();         // matmul, mm, bmm, linear, addmm
std::vector<Rule> normalization_rules();  // softmax, log_softmax, layer_norm
std::vector<Rule> combine_rules();        // cat, where, clamp
std::vector<Rule> cast_rules();           // dtype conversions, clone
std::vector<Rule> inplace_rules();        // add_/mul_/relu_/fill_/copy_ into clones, views, inputs

// Every family, weighted.
const std::vector<Rule>& all_rules();

// Shorthands for building nodes.
Node op_node(std::string op, std::vector<Arg> args);
inline Arg v(int value) { return Arg::value(value); }
inline Arg lit(ops::IValue literal) { return Arg::lit(std::move(literal)); }

}  // namespace kiln::fuzz
