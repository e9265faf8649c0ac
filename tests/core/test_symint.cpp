#include <gtest/gtest.h>
#include <kiln/core/tensor_impl.h>

#include <string>

namespace kiln {
namespace {

TEST(SymInt, PlainArithmeticIsIntegerArithmetic) {
  SymInt a = 7, b = -2;
  EXPECT_EQ((a + b).expect_int(), 5);
  EXPECT_EQ((a - b).expect_int(), 9);
  EXPECT_EQ((a * b).expect_int(), -14);
  EXPECT_EQ((a / b).expect_int(), -4);  // floor division, as Python's //
  EXPECT_EQ((a % b).expect_int(), -1);  // sign of the divisor, as Python's %
  EXPECT_EQ((SymInt(-7) / SymInt(2)).expect_int(), -4);
  EXPECT_EQ((SymInt(-7) % SymInt(2)).expect_int(), 1);
  EXPECT_TRUE(SymInt(3) < SymInt(4));
  EXPECT_FALSE(SymInt(3).is_symbolic());
  EXPECT_EQ(SymInt(3).str(), "3");
  EXPECT_THROW(SymInt(1) / SymInt(0), Error);
}

// A minimal symbol: a name and a hint, to check that handles are counted and printed.
class TestSymbol : public SymNodeImpl {
 public:
  TestSymbol(std::string name, int64_t hint, int* alive)
      : name_(std::move(name)), hint_(hint), alive_(alive) {
    ++*alive_;
  }
  ~TestSymbol() override { --*alive_; }
  std::string str() const override { return name_; }
  std::optional<int64_t> maybe_value() const override { return hint_; }
  SymInt add(const SymInt& o) const override { return hint_ + o.maybe_int().value(); }
  SymInt sub(const SymInt& o) const override { return hint_ - o.maybe_int().value(); }
  SymInt mul(const SymInt& o) const override { return hint_ * o.maybe_int().value(); }
  SymInt floordiv(const SymInt& o) const override { return hint_ / o.maybe_int().value(); }
  SymInt mod(const SymInt& o) const override { return hint_ % o.maybe_int().value(); }
  SymInt neg() const override { return -hint_; }
  bool guard_eq(const SymInt& o) const override { return hint_ == o.maybe_int(); }
  bool guard_lt(const SymInt& o) const override { return hint_ < o.maybe_int().value(); }
  bool guard_gt(const SymInt& o) const override { return hint_ > o.maybe_int().value(); }

 private:
  std::string name_;
  int64_t hint_;
  int* alive_;
};

TEST(SymInt, HandlesAreReferenceCounted) {
  int alive = 0;
  {
    SymInt s = SymInt::from_node(
        new TestSymbol("s0", 5, &alive));  // NOLINT: SymNodeImpl is intrusively counted
    EXPECT_TRUE(s.is_symbolic());
    EXPECT_EQ(s.str(), "s0");
    EXPECT_EQ(s.maybe_int(), 5);
    EXPECT_THROW(s.expect_int(), Error);
    SymInt copy = s;
    EXPECT_EQ(alive, 1);
    EXPECT_EQ((copy + 1).expect_int(), 6);
    EXPECT_TRUE(copy == SymInt(5));
  }
  EXPECT_EQ(alive, 0);
}

TEST(SymInt, TensorImplOwnsSymbolicSizes) {
  int alive = 0;
  {
    SymInt s = SymInt::from_node(new TestSymbol("s0", 4, &alive));  // NOLINT
    Storage storage = make_storage(0, Device::meta());
    std::vector<SymInt> sizes{s, 3};
    std::vector<SymInt> strides{3, 1};
    TensorImpl impl(storage, kFloat32, sizes, strides);
    EXPECT_TRUE(impl.has_symbolic_sizes_strides());
    EXPECT_EQ(impl.sym_sizes()[0].str(), "s0");
    EXPECT_THROW(impl.sizes(), Error);
    EXPECT_THROW(impl.numel(), Error);
    sizes.clear();
    s = SymInt(0);
    EXPECT_EQ(alive, 1);  // the impl still holds it
  }
  EXPECT_EQ(alive, 0);
}

}  // namespace
}  // namespace kiln
