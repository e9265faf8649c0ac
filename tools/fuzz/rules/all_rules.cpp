#include "fuzz/rules/rules.h"

namespace kiln::fuzz {

Node op_node(std::string op, std::vector<Arg> args) {
  Node node;
  node.op = std::move(op);
  node.args = std::move(args);
  return node;
}

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all;
    for (auto family : {unary_rules, binary_rules, reduction_rules, view_rules, matmul_rules,
                        normalization_rules, combine_rules, cast_rules, inplace_rules}) {
      for (Rule& r : family()) all.push_back(std::move(r));
    }
    return all;
  }();
  return rules;
}

}  // namespace kiln::fuzz
