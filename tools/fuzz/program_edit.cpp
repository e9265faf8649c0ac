#include "fuzz/program_edit.h"

#include <algorithm>
#include <vector>

namespace kiln::fuzz {

Program without_dead_code(const Program& program) {
  const int num_inputs = static_cast<int>(program.inputs.size());
  std::vector<bool> live(static_cast<size_t>(program.num_values()), false);
  for (int v : program.outputs) live[static_cast<size_t>(v)] = true;
  // A node that writes into an argument changes data other nodes read: it lives while its
  // argument does (and keeps it alive). Marking runs to a fixed point, since an argument may
  // become live only through a later reader.
  auto mark = [&live](int v) {
    const bool was = live[static_cast<size_t>(v)];
    live[static_cast<size_t>(v)] = true;
    return !was;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int n = static_cast<int>(program.nodes.size()) - 1; n >= 0; --n) {
      const Node& node = program.nodes[static_cast<size_t>(n)];
      const int value = num_inputs + n;
      if (node.target == WriteTarget::Argument &&
          live[static_cast<size_t>(node.args[0].values[0])]) {
        changed = mark(value) || changed;
      }
      if (!live[static_cast<size_t>(value)]) continue;
      for (const Arg& a : node.args) {
        for (int v : a.values) changed = mark(v) || changed;
      }
    }
  }
  std::vector<int> renumber(live.size(), -1);
  Program out;
  out.seed = program.seed;
  int next = 0;
  for (int i = 0; i < num_inputs; ++i) {
    if (!live[static_cast<size_t>(i)]) continue;
    renumber[static_cast<size_t>(i)] = next++;
    out.inputs.push_back(program.inputs[static_cast<size_t>(i)]);
  }
  for (size_t n = 0; n < program.nodes.size(); ++n) {
    if (!live[static_cast<size_t>(num_inputs) + n]) continue;
    renumber[static_cast<size_t>(num_inputs) + n] = next++;
    Node node = program.nodes[n];
    for (Arg& a : node.args) {
      for (int& v : a.values) v = renumber[static_cast<size_t>(v)];
    }
    out.nodes.push_back(std::move(node));
  }
  for (int v : program.outputs) out.outputs.push_back(renumber[static_cast<size_t>(v)]);
  return out;
}

Program with_uses_replaced(const Program& program, int from, int to) {
  Program p = program;
  for (Node& node : p.nodes) {
    for (Arg& a : node.args) std::replace(a.values.begin(), a.values.end(), from, to);
  }
  std::replace(p.outputs.begin(), p.outputs.end(), from, to);
  // An output listed twice adds nothing.
  std::vector<int> unique;
  for (int v : p.outputs) {
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  }
  p.outputs = unique;
  return without_dead_code(p);
}

}  // namespace kiln::fuzz
