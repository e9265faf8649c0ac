#include "fuzz/builder.h"

#include <kiln/kiln.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::fuzz {

bool is_float(const Tensor& t) { return is_floating_point(t.dtype()); }
bool is_int(const Tensor& t) { return is_integral(t.dtype(), /*include_bool=*/false); }
bool is_bool(const Tensor& t) { return t.dtype() == DType::Bool; }

bool broadcastable(IntList a, IntList b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

bool broadcasts_to(IntList from, IntList to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 1; i <= from.size(); ++i) {
    const int64_t x = from[from.size() - i], y = to[to.size() - i];
    if (x != y && x != 1) return false;
  }
  return true;
}

ProgramBuilder::ProgramBuilder(uint64_t seed, GeneratorOptions options)
    : rng_(seed), options_(options), seed_(seed) {}

Program ProgramBuilder::program() const {
  Program p;
  p.seed = seed_;
  p.inputs = inputs_;
  std::vector<int> renumber(values_.size());
  int next_node = static_cast<int>(inputs_.size());
  for (size_t v = 0; v < values_.size(); ++v) {
    renumber[v] = input_of_[v] >= 0 ? input_of_[v] : next_node++;
  }
  for (Node node : nodes_) {
    for (Arg& a : node.args) {
      for (int& v : a.values) v = renumber[static_cast<size_t>(v)];
    }
    p.nodes.push_back(std::move(node));
  }
  return p;
}

bool ProgramBuilder::requires_grad(int v) const {
  const int input = input_of_.at(static_cast<size_t>(v));
  return input >= 0 && inputs_[static_cast<size_t>(input)].requires_grad;
}

bool ProgramBuilder::has_users(int v) const {
  for (const Node& node : nodes_) {
    for (const Arg& a : node.args) {
      if (std::find(a.values.begin(), a.values.end(), v) != a.values.end()) return true;
    }
  }
  return false;
}

int ProgramBuilder::pick(const std::function<bool(int, const Tensor&)>& accept) {
  std::vector<int> candidates;
  for (int v = 0; v < num_values(); ++v) {
    if (!facts_[v].finite || facts_[v].max_abs > 1e4) continue;
    if (accept(v, values_[v])) candidates.push_back(v);
  }
  if (candidates.empty()) return -1;
  // Recent values are likelier, so programs grow into chains rather than fans of the inputs.
  std::vector<double> weights;
  for (size_t i = 0; i < candidates.size(); ++i) weights.push_back(1.0 + static_cast<double>(i));
  return candidates[rng_.weighted(weights)];
}

std::vector<int64_t> ProgramBuilder::random_sizes(int64_t rank) {
  std::vector<int64_t> sizes;
  int64_t numel = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = rng_.chance(0.04) ? 0 : rng_.chance(0.2) ? 1 : rng_.uniform(2, 7);
    if (s > 1 && numel * s > options_.max_numel) s = 1;
    numel *= std::max<int64_t>(s, 1);
    sizes.push_back(s);
  }
  return sizes;
}

DType ProgramBuilder::random_input_dtype() {
  const double r = rng_.real(0, 1);
  return r < 0.8 ? DType::Float32 : r < 0.92 ? DType::Int64 : DType::Bool;
}

int ProgramBuilder::add_input(std::vector<int64_t> sizes, DType dtype) {
  InputSpec spec;
  spec.sizes = std::move(sizes);
  spec.dtype = dtype;
  spec.requires_grad = is_floating_point(dtype) && rng_.chance(0.5);
  spec.data_seed = rng_.next();
  Program one;
  one.inputs = {spec};
  const Tensor t = make_inputs(one)[0].detach();
  input_of_.push_back(static_cast<int>(inputs_.size()));
  inputs_.push_back(spec);
  values_.push_back(t);
  facts_.push_back(facts_of(t));
  return num_values() - 1;
}

int ProgramBuilder::add_node(Node node) {
  Tensor out;
  try {
    autograd::NoGradGuard no_grad;
    out = execute_node(node, values_, DType::Float32);
  } catch (const Error& e) {
    std::string listing = program().str();
    throw Error("kiln_fuzz: the generator made a node eager rejects (seed " +
                std::to_string(seed_) + "): " + e.what() + "\nwhile adding " + node.op + " to\n" +
                listing);
  }
  // A write into an argument changed that input's data.
  if (node.target == WriteTarget::Argument) {
    const size_t target = static_cast<size_t>(node.args[0].values[0]);
    facts_[target] = facts_of(values_[target]);
  }
  nodes_.push_back(std::move(node));
  input_of_.push_back(-1);
  values_.push_back(out);
  facts_.push_back(facts_of(out));
  return num_values() - 1;
}

double ProgramBuilder::margin(int v) const { return 1e-3 * std::max(1.0, facts_.at(v).max_abs); }

ValueFacts ProgramBuilder::facts_of(const Tensor& t) const {
  ValueFacts f;
  if (t.numel() == 0) return f;
  const std::vector<double> xs = t.detach().to(DType::Float64).contiguous().tolist<double>();
  f.min = std::numeric_limits<double>::infinity();
  f.max = -f.min;
  f.min_abs = f.min;
  for (double x : xs) {
    if (!std::isfinite(x)) f.finite = false;
    f.min = std::min(f.min, x);
    f.max = std::max(f.max, x);
    f.min_abs = std::min(f.min_abs, std::abs(x));
    f.max_abs = std::max(f.max_abs, std::abs(x));
    f.min_to_integer = std::min(f.min_to_integer, std::abs(x - std::round(x)));
    f.min_to_half_integer = std::min(f.min_to_half_integer, std::abs(x - std::floor(x) - 0.5));
  }
  return f;
}

}  // namespace kiln::fuzz
