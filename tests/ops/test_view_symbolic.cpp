// View meta functions on symbolic sizes: a minimal SymNode (an expression string plus a hint)
// stands in for the dynamic-shapes layer, so views of a meta tensor of size [s0, 4] must come
// out with symbolic sizes/strides whose hints match the concrete answer.
#include "test_view_util.h"

#include <cmath>

namespace kiln {
namespace {

int64_t hint_of(const SymInt& s) { return s.maybe_int().value(); }

class HintedSym : public SymNodeImpl {
 public:
  HintedSym(std::string expr, int64_t hint) : expr_(std::move(expr)), hint_(hint) {}
  // The node is owned by the SymInts that reference it (intrusive refcount; the last one
  // deletes it), so it is created with new and handed straight to a SymInt.
  static SymInt make(std::string expr, int64_t hint) {
    return SymInt::from_node(new HintedSym(std::move(expr), hint));
  }
  std::string str() const override { return expr_; }
  std::optional<int64_t> maybe_value() const override { return hint_; }
  SymInt add(const SymInt& o) const override { return bin("+", o, hint_ + hint_of(o)); }
  SymInt sub(const SymInt& o) const override { return bin("-", o, hint_ - hint_of(o)); }
  SymInt mul(const SymInt& o) const override { return bin("*", o, hint_ * hint_of(o)); }
  SymInt floordiv(const SymInt& o) const override {
    return bin("//", o,
               static_cast<int64_t>(
                   std::floor(static_cast<double>(hint_) / static_cast<double>(hint_of(o)))));
  }
  SymInt mod(const SymInt& o) const override {
    int64_t b = hint_of(o);
    return bin("%", o, ((hint_ % b) + b) % b);
  }
  SymInt neg() const override { return make("-" + expr_, -hint_); }
  bool guard_eq(const SymInt& o) const override { return hint_ == hint_of(o); }
  bool guard_lt(const SymInt& o) const override { return hint_ < hint_of(o); }
  bool guard_gt(const SymInt& o) const override { return hint_ > hint_of(o); }

 private:
  SymInt bin(const char* op, const SymInt& o, int64_t hint) const {
    return make("(" + expr_ + op + o.str() + ")", hint);
  }
  std::string expr_;
  int64_t hint_;
};

// A meta tensor with the given (possibly symbolic) sizes and contiguous strides.
Tensor meta_tensor(const SymDimVector& sizes) {
  Storage s = make_storage(0, Device::meta());
  return Tensor(std::make_shared<TensorImpl>(s, kFloat32, sizes, contiguous_strides(sizes),
                                             SymInt(int64_t{0})));
}

// The hints of a symbolic size list (plain entries are their own values).
std::vector<int64_t> hints(SymIntList l) {
  std::vector<int64_t> out;
  for (const SymInt& s : l) out.push_back(hint_of(s));
  return out;
}

TEST(ViewSymbolic, ViewsKeepSymbolsAndHints) {
  SymInt s0 = HintedSym::make("s0", 3);
  Tensor x = meta_tensor({s0, SymInt(int64_t{4})});  // [s0, 4], strides [4, 1]

  Tensor t = x.transpose(0, 1);
  EXPECT_TRUE(t.sym_sizes()[1].is_symbolic());
  EXPECT_EQ(t.sym_sizes()[1].str(), "s0");
  EXPECT_EQ(hints(t.sym_strides()), (std::vector<int64_t>{1, 4}));

  Tensor u = x.unsqueeze(0);  // the new dim's stride is s0 * 4
  EXPECT_TRUE(u.sym_strides()[0].is_symbolic());
  EXPECT_EQ(hints(u.sym_sizes()), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(hints(u.sym_strides()), (std::vector<int64_t>{12, 4, 1}));

  Tensor flat = x.view({-1});
  EXPECT_TRUE(flat.sym_sizes()[0].is_symbolic());
  EXPECT_EQ(hints(flat.sym_sizes()), (std::vector<int64_t>{12}));

  Tensor r = x.reshape({2, -1});
  EXPECT_EQ(hints(r.sym_sizes()), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(hints(r.sym_strides()), (std::vector<int64_t>{6, 1}));

  Tensor s = x.slice(0, 1);
  EXPECT_TRUE(s.sym_sizes()[0].is_symbolic());
  EXPECT_EQ(hints(s.sym_sizes()), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(hint_of(s.impl()->sym_storage_offset()), 4);

  Tensor sel = x.select(1, -2);
  EXPECT_EQ(sel.sym_sizes()[0].str(), "s0");
  EXPECT_EQ(hint_of(sel.impl()->sym_storage_offset()), 2);

  Tensor p = x.permute({1, 0}).diagonal();
  EXPECT_EQ(hints(p.sym_sizes()), (std::vector<int64_t>{3}));
  EXPECT_EQ(hints(p.sym_strides()), (std::vector<int64_t>{5}));

  Tensor row = meta_tensor({SymInt(int64_t{1}), SymInt(int64_t{4})});
  Tensor e = ops::call1(ops::OpRegistry::instance().get("expand"),
                        {row, SymDimVector{s0, SymInt(int64_t{-1})}});
  EXPECT_EQ(e.sym_sizes()[0].str(), "s0");
  EXPECT_EQ(hints(e.sym_strides()), (std::vector<int64_t>{0, 1}));
}

TEST(ViewSymbolic, OutputCountsSpecializeToTheHint) {
  SymInt s0 = HintedSym::make("s0", 3);
  Tensor x = meta_tensor({s0, SymInt(int64_t{4})});
  std::vector<Tensor> rows = x.unbind();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(hint_of(rows[2].impl()->sym_storage_offset()), 8);
  std::vector<Tensor> pieces = x.split(2);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(hints(pieces[1].sym_sizes()), (std::vector<int64_t>{1, 4}));
  std::vector<Tensor> chunks = x.chunk(3);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(hints(chunks[0].sym_sizes()), (std::vector<int64_t>{1, 4}));
  std::vector<Tensor> cols = x.split({1, 3}, 1);
  EXPECT_EQ(cols[1].sym_sizes()[0].str(), "s0");
}

TEST(ViewSymbolic, ErrorsStillRaise) {
  SymInt s0 = HintedSym::make("s0", 3);
  Tensor x = meta_tensor({s0, SymInt(int64_t{4})});
  EXPECT_TRUE(testing::throws_error(
      [&] {
        x.view({5, -1});
      },
      {"view: shape '[5, -1]' is invalid for input of size (", "s0"}));
  EXPECT_THROW(x.select(0, 3), IndexError);
}

}  // namespace
}  // namespace kiln
