// The op registry: schema parsing, argument checking, variants and the dispatch mode hook.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

namespace kiln {
namespace {

using ops::ArgType;
using ops::parse_schema;

TEST(Schema, ParsesArgumentsDefaultsAndAnnotations) {
  auto s = parse_schema(
      "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(s.name, "add");
  EXPECT_EQ(s.overload, "out");
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_EQ(s.arguments[0].type, ArgType::Tensor);
  EXPECT_FALSE(s.arguments[0].kwarg_only);
  EXPECT_TRUE(s.arguments[2].kwarg_only);
  EXPECT_EQ(s.arguments[2].default_value->to_scalar().to_int(), 1);
  EXPECT_TRUE(s.arguments[3].is_mutable);
  EXPECT_EQ(*s.arguments[3].alias_set, "a");
  EXPECT_TRUE(s.is_mutating());
  EXPECT_EQ(s.find("alpha"), 2);
  EXPECT_EQ(s.find("beta"), -1);
}

TEST(Schema, ParsesListsOptionalsAndMultipleReturns) {
  auto s = parse_schema(
      "f(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, "
      "str mode='tanh', float eps=1e-05, SymInt[] size=[2, 3]) -> (Tensor values, Tensor indices)");
  EXPECT_EQ(s.arguments[1].type, ArgType::IntList);
  EXPECT_TRUE(s.arguments[1].optional);
  EXPECT_TRUE(s.arguments[1].default_value->is_none());
  EXPECT_FALSE(s.arguments[2].default_value->to_bool());
  EXPECT_EQ(s.arguments[4].default_value->to_string(), "tanh");
  EXPECT_DOUBLE_EQ(s.arguments[5].default_value->to_double(), 1e-5);
  EXPECT_EQ(s.arguments[6].default_value->to_int_list(), (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(s.returns.size(), 2u);
  EXPECT_EQ(s.returns[1].name, "indices");
}

TEST(Schema, FixedSizeListsExpandOneIntAndOptionalTensorListsHoldNone) {
  auto s = parse_schema(
      "pool(Tensor self, int[2] kernel_size, SymInt[2] stride=1, Tensor?[] indices=[]) -> Tensor");
  EXPECT_EQ(s.arguments[1].list_size, 2);
  EXPECT_EQ(s.arguments[2].default_value->to_int_list(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(s.arguments[3].type, ArgType::TensorList);
  EXPECT_TRUE(s.arguments[3].optional_elements);
  EXPECT_FALSE(s.arguments[3].optional);
  EXPECT_EQ(s.str(),
            "pool(Tensor self, int[2] kernel_size, SymInt[2] stride=[1, 1], Tensor?[] indices=[]) "
            "-> Tensor");
  EXPECT_EQ(parse_schema(s.str()).str(), s.str());
  // One int for an int[2] stands for both entries, as in PyTorch (kernel_size=3 means (3, 3)).
  ops::Stack args{full({1, 1, 4, 4}, 1.0), int64_t{3}, int64_t{2}};
  ops::normalize_args(s, args);
  EXPECT_EQ(args[1].to_int_list(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(args[2].to_int_list(), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(testing::throws_error([] { parse_schema("f(int?[] xs) -> Tensor"); },
                                    {"only Tensor?[] may hold None"}));
}

TEST(Schema, PrintsAndReparses) {
  const char* text =
      "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor";
  auto s = parse_schema(text);
  EXPECT_EQ(s.str(), text);
}

TEST(Schema, ReportsSyntaxErrors) {
  EXPECT_TRUE(testing::throws_error([] { parse_schema("f(Tensor self -> Tensor"); },
                                    {"schema parse error"}));
  EXPECT_TRUE(testing::throws_error([] { parse_schema("f(Widget w) -> Tensor"); },
                                    {"unknown type 'Widget'"}));
}

TEST(Registry, NormalizeFillsDefaultsAndChecksTypes) {
  auto s = parse_schema("g(Tensor self, int n, *, float scale=2.0) -> Tensor");
  ops::Stack args{full({2}, 1.0), int64_t{3}};
  ops::normalize_args(s, args);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_DOUBLE_EQ(args[2].to_double(), 2.0);
  ops::Stack missing{full({2}, 1.0)};
  EXPECT_TRUE(testing::throws_error([&] { ops::normalize_args(s, missing); },
                                    {"g", "missing required argument 'n'"}));
  ops::Stack wrong{full({2}, 1.0), std::string("three")};
  EXPECT_TRUE(testing::throws_error([&] { ops::normalize_args(s, wrong); },
                                    {"g", "argument 'n' must be int", "str"}));
  ops::Stack too_many{full({2}, 1.0), int64_t{1}, 1.0, 2.0};
  EXPECT_TRUE(testing::throws_error([&] { ops::normalize_args(s, too_many); }, {"at most 3"}));
}

TEST(Registry, LooksUpOpsAndVariants) {
  auto& reg = ops::OpRegistry::instance();
  EXPECT_NE(reg.find("_to_copy"), nullptr);
  EXPECT_EQ(reg.find("no_such_op"), nullptr);
  EXPECT_TRUE(testing::throws_error([&] { reg.get("no_such_op"); }, {"no op named 'no_such_op'"}));
  auto names = reg.all();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end(),
                             [](auto* a, auto* b) { return a->full_name() < b->full_name(); }));
}

TEST(Registry, DuplicateDeclarationIsAnError) {
  EXPECT_TRUE(testing::throws_error(
      [] {
        ops::declare(
            ops::OpBuilder("_to_copy(Tensor self) -> Tensor").composite([](const ops::Stack&) {
              return std::vector<Tensor>{};
            }));
      },
      {"declared twice"}));
}

// A mode that records the ops it sees and then runs them.
class Recorder : public ops::DispatchMode {
 public:
  std::vector<std::string> seen;
  std::vector<Tensor> dispatch(const ops::OpDef& op, ops::Stack& args) override {
    seen.push_back(op.full_name());
    return ops::call(op, args);  // the mode is not re-entered for its own calls
  }
};

TEST(Dispatch, ModeInterceptsEveryOpCall) {
  Recorder rec;
  Tensor t;
  {
    ops::DispatchModeGuard guard(&rec);
    t = full({2, 2}, 3.0);
    t = t.to(kFloat64);
  }
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[0], "full");
  EXPECT_EQ(rec.seen[1], "_to_copy");
  EXPECT_EQ(t.dtype(), kFloat64);
  // Outside the guard nothing is recorded.
  (void)full({1}, 1.0);
  EXPECT_EQ(rec.seen.size(), 2u);
}

TEST(Dispatch, MetaTensorsComputeShapesWithoutData) {
  Tensor m = empty({3, 4}, TensorOptions(kFloat32).device(Device::meta()));
  EXPECT_TRUE(m.is_meta());
  Tensor c = m.to(kFloat64);
  EXPECT_TRUE(c.is_meta());
  EXPECT_EQ(c.dtype(), kFloat64);
  EXPECT_EQ(IntList(c.sizes()), IntList({3, 4}));
}

}  // namespace
}  // namespace kiln
