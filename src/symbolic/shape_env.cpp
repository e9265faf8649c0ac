#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_node.h>

#include <algorithm>

#include "symbolic/checked_math.h"
#include "symbolic/polynomial.h"

namespace kiln::symbolic {

namespace {

bool logging() { return logs::enabled(logs::Channel::dynamic); }
void log(const std::string& message) { logs::log(logs::Channel::dynamic, message); }

}  // namespace

std::shared_ptr<ShapeEnv> ShapeEnv::create(ShapeEnvOptions options) {
  return std::make_shared<ShapeEnv>(Private{}, options);
}

ShapeEnv::ShapeEnv(Private, ShapeEnvOptions options) : options_(options) {}

SymInt ShapeEnv::create_symbol(int64_t hint, std::string source, std::optional<int64_t> min,
                               std::optional<int64_t> max) {
  KILN_CHECK(hint >= 0, "ShapeEnv::create_symbol: expected a size >= 0 for {}, got {}", source,
             hint);
  KILN_CHECK(!min || *min >= 0, "ShapeEnv::create_symbol: expected a minimum >= 0 for {}, got {}",
             source, *min);
  KILN_CHECK(!min || !max || *min <= *max,
             "ShapeEnv::create_symbol: expected min <= max for {}, got min {} and max {}", source,
             *min, *max);
  KILN_CHECK((!min || hint >= *min) && (!max || hint <= *max),
             "ShapeEnv::create_symbol: {} has size {}, outside its range [{}, {}]", source, hint,
             min ? std::to_string(*min) : "0", max ? std::to_string(*max) : "inf");
  const bool bounded = min || max;

  if (hint == 0 || hint == 1) {
    std::string reason = bounded
                             ? fmt::format(
                                   "size {} is specialized although marked dynamic: sizes 0 and 1 "
                                   "always are (0/1 specialization)",
                                   hint)
                             : fmt::format("size {} (0/1 specialization)", hint);
    if (logging()) log(fmt::format("specialized {} = {}: {}", source, hint, reason));
    inputs_.push_back(
        {std::move(source), hint, InputDim::Kind::Specialized, -1, std::move(reason)});
    return hint;
  }

  if (options_.duck_sizes && !bounded) {
    if (auto it = symbol_of_hint_.find(hint); it != symbol_of_hint_.end()) {
      const int64_t id = it->second;
      std::string reason = fmt::format("duck sizing: the same size {} as {}", hint,
                                       symbols_[static_cast<size_t>(id)].source);
      if (logging()) log(fmt::format("{} = s{} ({})", source, id, reason));
      inputs_.push_back({std::move(source), hint, InputDim::Kind::Duck, id, std::move(reason)});
      return to_symint(SymExpr::symbol(id));
    }
  }

  // A symbol stands for sizes >= 2: 0 and 1 were specialized above, and a later call with one
  // of them must not reuse code that assumed otherwise.
  const SymRange declared{std::max<int64_t>(2, min.value_or(2)), max.value_or(SymRange::kPosInf)};
  const auto id = static_cast<int64_t>(symbols_.size());
  symbols_.push_back({source, hint, inputs_.size(), declared});
  hints_.push_back(hint);
  ranges_.push_back(declared);
  if (!bounded) symbol_of_hint_.emplace(hint, id);
  if (logging()) {
    log(fmt::format("create_symbol s{} = {} for {}, range {}", id, hint, source, declared.str()));
  }
  inputs_.push_back({std::move(source), hint, InputDim::Kind::Symbol, id, ""});
  return SymNode::make(shared_from_this(), SymExpr::symbol(id));
}

namespace {

// `e` with replaced symbols rewritten; a replacement only reads symbols of lower ids or is a
// constant, so the recursion ends.
SymExpr apply_replacements(const SymExpr& e, const std::map<int64_t, SymExpr>& replacements) {
  if (replacements.empty()) return e;
  return substitute(e, [&](int64_t id) -> std::optional<SymExpr> {
    auto it = replacements.find(id);
    if (it == replacements.end()) return std::nullopt;
    return apply_replacements(it->second, replacements);
  });
}

}  // namespace

SymExpr ShapeEnv::simplify(const SymExpr& e) const {
  return simplify_in_ranges(apply_replacements(e, replacements_), ranges_);
}

SymRange ShapeEnv::bounds(const SymExpr& e) const { return symbolic::bounds(simplify(e), ranges_); }

int64_t ShapeEnv::hint(const SymExpr& e) const { return evaluate(e, hints_); }

namespace {

// Sizes and the expressions made of them stay far below this (no tensor has 2^62 elements), so a
// comparison with a constant beyond it (a slice bound of None, Python's sys.maxsize) is decided
// without a guard, and without the subtraction that would overflow int64.
constexpr int64_t kBeyondAnySize = int64_t{1} << 62;

bool far(const SymExpr& e) {
  return e.is_constant() && (e.value() >= kBeyondAnySize || e.value() <= -kBeyondAnySize);
}

}  // namespace

std::optional<bool> ShapeEnv::static_eq(const SymExpr& a, const SymExpr& b) const {
  if (a.is_constant() && b.is_constant()) return a.value() == b.value();
  if (far(a) || far(b)) return false;
  const SymExpr d = simplify(a - b);
  if (d.is_constant()) return d.value() == 0;
  const SymRange r = symbolic::bounds(d, ranges_);
  if (r.lo > 0 || r.hi < 0) return false;
  return std::nullopt;
}

std::optional<bool> ShapeEnv::static_lt(const SymExpr& a, const SymExpr& b) const {
  if (a.is_constant() && b.is_constant()) return a.value() < b.value();
  if (far(a)) return a.value() < 0;  // -far < size; far < size is false
  if (far(b)) return b.value() > 0;  // size < far; size < -far is false
  const SymExpr d = simplify(a - b);
  if (d.is_constant()) return d.value() < 0;
  const SymRange r = symbolic::bounds(d, ranges_);
  if (r.hi < 0) return true;
  if (r.lo >= 0) return false;
  return std::nullopt;
}

bool ShapeEnv::guard_eq(const SymExpr& a, const SymExpr& b) {
  if (std::optional<bool> known = static_eq(a, b)) return *known;
  const SymExpr d = simplify(a - b);
  const bool result = hint(d) == 0;
  add_guard(Guard::of_difference(result ? Relation::Eq : Relation::Ne, d));
  return result;
}

bool ShapeEnv::guard_lt(const SymExpr& a, const SymExpr& b) {
  if (std::optional<bool> known = static_lt(a, b)) return *known;
  const SymExpr d = simplify(a - b);
  const bool result = hint(d) < 0;
  add_guard(Guard::of_difference(result ? Relation::Lt : Relation::Ge, d));
  return result;
}

SymInt ShapeEnv::to_symint(const SymExpr& e) {
  SymExpr s = simplify(e);
  if (s.is_constant()) return s.value();
  return SymNode::make(shared_from_this(), std::move(s));
}

std::string ShapeEnv::guards_str() const {
  std::string out;
  for (const Guard& g : guards_) {
    if (!out.empty()) out += '\n';
    out += g.str();
  }
  return out;
}

bool ShapeEnv::holds(const Guard& guard) const {
  return symbolic::holds(guard.relation, hint(guard.difference()));
}

void ShapeEnv::replay(const Guard& guard) {
  KILN_INTERNAL_ASSERT(holds(guard));
  add_guard(guard);
}

void ShapeEnv::add_guard(Guard guard) {
  if (std::find(guards_.begin(), guards_.end(), guard) != guards_.end()) return;
  if (logging()) {
    std::string values;
    for (int64_t id : free_symbols(guard.difference())) {
      values += fmt::format("{}s{} = {}", values.empty() ? "" : ", ", id,
                            hints_[static_cast<size_t>(id)]);
    }
    log(fmt::format("guard added: {} (at {})", guard.str(), values));
  }
  guards_.push_back(guard);
  learn_from(guard);
}

void ShapeEnv::learn_from(const Guard& guard) {
  const Polynomial p = to_polynomial(simplify(guard.difference()));
  const int64_t c = constant_term(p);
  std::vector<std::pair<Monomial, int64_t>> terms;
  for (const auto& [m, coeff] : p) {
    if (!m.empty()) terms.emplace_back(m, coeff);
  }
  auto single_symbol = [](const Monomial& m) {
    return m.size() == 1 && m[0].kind() == SymExpr::Kind::Symbol;
  };
  if (terms.size() == 1 && single_symbol(terms[0].first)) {
    // a*s + c REL 0 bounds s.
    const int64_t s = terms[0].first[0].value();
    const int64_t a = terms[0].second;
    // Narrows s to a*s <= m.
    auto at_most = [&](int64_t a_, int64_t m) {
      if (a_ > 0) {
        narrow(s, {SymRange::kNegInf, floor_div(m, a_)});
      } else {
        narrow(s, {checked_neg(floor_div(m, checked_neg(a_))), SymRange::kPosInf});
      }
    };
    switch (guard.relation) {
      case Relation::Lt:
        at_most(a, checked_add(checked_neg(c), -1));
        break;
      case Relation::Le:
        at_most(a, checked_neg(c));
        break;
      case Relation::Gt:
        at_most(checked_neg(a), checked_add(c, -1));
        break;
      case Relation::Ge:
        at_most(checked_neg(a), c);
        break;
      case Relation::Eq:
        if (checked_neg(c) % a == 0) narrow(s, {checked_neg(c) / a, checked_neg(c) / a});
        break;
      case Relation::Ne:
        break;
    }
    return;
  }
  // Eq(s_i, s_j): the later symbol reads the earlier one from now on.
  if (guard.relation == Relation::Eq && c == 0 && terms.size() == 2 &&
      single_symbol(terms[0].first) && single_symbol(terms[1].first) &&
      terms[0].second == -terms[1].second && (terms[0].second == 1 || terms[0].second == -1)) {
    const int64_t i = std::min(terms[0].first[0].value(), terms[1].first[0].value());
    const int64_t j = std::max(terms[0].first[0].value(), terms[1].first[0].value());
    narrow(i, ranges_[static_cast<size_t>(j)]);
    replace(j, SymExpr::symbol(i));
  }
}

void ShapeEnv::narrow(int64_t symbol, SymRange range) {
  SymRange& r = ranges_[static_cast<size_t>(symbol)];
  const SymRange narrowed{std::max(r.lo, range.lo), std::min(r.hi, range.hi)};
  // The hint satisfies every guard, so the narrowed range still holds it.
  KILN_INTERNAL_ASSERT(narrowed.contains(hints_[static_cast<size_t>(symbol)]));
  if (narrowed == r) return;
  if (logging()) log(fmt::format("s{} narrowed to {}", symbol, narrowed.str()));
  r = narrowed;
  if (r.is_single()) replace(symbol, r.lo);
}

void ShapeEnv::replace(int64_t symbol, const SymExpr& by) {
  if (replacements_.contains(symbol)) return;
  if (logging()) log(fmt::format("s{} replaced by {}", symbol, by.str()));
  replacements_.emplace(symbol, by);
}

}  // namespace kiln::symbolic
