#include "fuzz/generator.h"

#include "fuzz/program_edit.h"
#include "fuzz/rules/rules.h"

#include <algorithm>
#include <set>

namespace kiln::fuzz {

Program generate(uint64_t seed, const GeneratorOptions& options) {
  ProgramBuilder b(seed, options);
  for (int64_t i = b.rng().uniform(1, 3); i > 0; --i) {
    b.add_input(b.random_sizes(b.rng().uniform(0, options.max_rank)), b.random_input_dtype());
  }
  const std::vector<Rule>& rules = all_rules();
  std::vector<double> weights;
  for (const Rule& r : rules) weights.push_back(r.weight);
  const int64_t target = b.rng().uniform(1, std::max(1, options.max_ops));
  for (int attempts = 0; b.num_nodes() < target && attempts < 40 * target; ++attempts) {
    rules[b.rng().weighted(weights)].propose(b);
  }
  if (b.num_nodes() == 0) {
    // Every draw failed (all inputs too large, say): clone guarantees one node.
    b.add_node(op_node("clone", {v(b.num_values() - 1)}));
  }
  // Outputs: the values nothing reads, and each other node's value with some probability.
  Program program = b.take();
  std::set<int> read;
  for (const Node& node : program.nodes) {
    for (const Arg& a : node.args) read.insert(a.values.begin(), a.values.end());
  }
  Rng rng(seed ^ 0x9e3779b97f4a7c15ull);
  const int first_node = static_cast<int>(program.inputs.size());
  for (int v = first_node; v < program.num_values(); ++v) {
    if (!read.count(v) || rng.chance(0.15)) program.outputs.push_back(v);
  }
  if (program.outputs.size() > 6) {
    program.outputs.erase(program.outputs.begin(), program.outputs.end() - 6);
  }
  // Rules that gave up may have left new inputs unread.
  return without_dead_code(program);
}

}  // namespace kiln::fuzz
