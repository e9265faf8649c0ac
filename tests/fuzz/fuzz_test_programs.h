#pragma once
// Hand-written programs for the fuzzer's tests (independent of the generator).
#include "fuzz/program.h"

namespace kiln::fuzz::testing {

// v0: float32 [3, 4] requiring grad, v1: float32 [4]:
//   v2 = exp(v0); v3 = add(v2, v1); v4 = sigmoid(v3); v5 = mul(v4, v0); v6 = sum(v5, [1])
//   returns [v6, v2]
inline Program chain_program() {
  Program p;
  p.seed = 42;
  p.inputs = {{{3, 4}, DType::Float32, true, 11}, {{4}, DType::Float32, false, 12}};
  auto node = [](std::string op, std::vector<Arg> args) {
    Node n;
    n.op = std::move(op);
    n.args = std::move(args);
    return n;
  };
  p.nodes = {node("exp", {Arg::value(0)}), node("add", {Arg::value(2), Arg::value(1)}),
             node("sigmoid", {Arg::value(3)}), node("mul", {Arg::value(4), Arg::value(0)}),
             node("sum", {Arg::value(5), Arg::lit(std::vector<int64_t>{1})})};
  p.outputs = {6, 2};
  return p;
}

}  // namespace kiln::fuzz::testing
