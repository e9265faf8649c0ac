#include "inductor/column_values.h"

#include "inductor/index_expr.h"

#include <map>

namespace kiln::inductor {

namespace {

// What a subexpression reads: whether only `var` among the loop variables (and whether `var`),
// and how many operations it costs.
struct Reads {
  bool only_var = true, var = false, available = true;
  int operations = 0;
};

class ColumnValueExtractor {
 public:
  ColumnValueExtractor(int64_t var, const std::set<int>& unavailable, int& next_buffer)
      : var_(var), unavailable_(unavailable), next_buffer_(next_buffer) {}

  Expr rewrite(const Expr& e) {
    if (auto it = rewritten_.find(e.get()); it != rewritten_.end()) return it->second;
    const Reads& r = reads(e);
    Expr out;
    if (r.only_var && r.var && r.available && r.operations >= 2) {
      const int buffer = next_buffer_++;
      values_.push_back({buffer, e});
      out = load(buffer, inductor::var(var_), e->dtype);
    } else if (e->args.empty()) {
      out = e;
    } else {
      ExprNode n = *e;
      bool changed = false;
      for (Expr& a : n.args) {
        Expr b = rewrite(a);
        changed = changed || b != a;
        a = std::move(b);
      }
      out = changed ? std::make_shared<const ExprNode>(std::move(n)) : e;
    }
    return rewritten_[e.get()] = out;
  }

  std::vector<ColumnValue> values() && { return std::move(values_); }

 private:
  const Reads& reads(const Expr& e) {
    if (auto it = reads_.find(e.get()); it != reads_.end()) return it->second;
    Reads r;
    const auto index_reads = [&](const Index& index) {
      for (int64_t v = 0; v <= max_var(index); ++v) {
        if (!uses_var(index, v)) continue;
        if (v == var_) {
          r.var = true;
        } else {
          r.only_var = false;
        }
      }
    };
    switch (e->kind) {
      case ExprNode::Kind::Load:
        index_reads(e->index);
        r.available = unavailable_.count(e->buffer) == 0;
        break;
      case ExprNode::Kind::IndexAsValue:
        index_reads(e->index);
        break;
      case ExprNode::Kind::Constant:
        break;
      case ExprNode::Kind::Call:
      case ExprNode::Kind::Cast:
        r.operations = 1;
        break;
    }
    for (const Expr& a : e->args) {
      const Reads& ra = reads(a);
      r.only_var = r.only_var && ra.only_var;
      r.var = r.var || ra.var;
      r.available = r.available && ra.available;
      r.operations += ra.operations;
    }
    return reads_[e.get()] = r;
  }

  // The largest variable number an index could read (its variables are numbered from 0).
  static int64_t max_var(const Index& e) {
    if (e == nullptr) return -1;
    int64_t m = e->kind == IndexNode::Kind::Var ? e->value : -1;
    return std::max({m, max_var(e->a), max_var(e->b)});
  }

  int64_t var_;
  const std::set<int>& unavailable_;
  int& next_buffer_;
  std::map<const ExprNode*, Reads> reads_;
  std::map<const ExprNode*, Expr> rewritten_;
  std::vector<ColumnValue> values_;
};

}  // namespace

std::vector<ColumnValue> extract_column_values(Expr& body, int64_t var,
                                               const std::set<int>& unavailable, int& next_buffer) {
  ColumnValueExtractor extractor(var, unavailable, next_buffer);
  body = extractor.rewrite(body);
  return std::move(extractor).values();
}

}  // namespace kiln::inductor
