// The user's call site (kiln::SourceLocation) that the typed API passes to every op call: what
// ops::current_call_site() names while an op runs, as a dispatch mode (capture's tracer) sees it.
#include <kiln/ops/registry.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "test_util.h"

namespace kiln {
namespace {

struct SeenOp {
  std::string op;
  std::string file;  // empty when no site was set
  unsigned line = 0;
};

// Records each op with the thread's call site, then runs it. Composite ops run with the mode
// installed again, so that the ops they are written in are recorded too.
class SiteRecorder : public ops::DispatchMode {
 public:
  std::vector<SeenOp> seen;
  std::vector<Tensor> dispatch(const ops::OpDef& op, ops::Stack& args) override {
    const kiln::SourceLocation* site = ops::current_call_site();
    seen.push_back({op.full_name(), site ? site->file_name() : "", site ? site->line() : 0u});
    if (op.kind == ops::OpKind::Composite) {
      ops::DispatchModeGuard inner(this);
      return ops::call_kernel(op, args);
    }
    return ops::call_kernel(op, args);
  }
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Every recorded op names this file and `line`.
::testing::AssertionResult all_at(const std::vector<SeenOp>& seen, unsigned line) {
  if (seen.empty()) return ::testing::AssertionFailure() << "no op was recorded";
  for (const SeenOp& s : seen) {
    if (!ends_with(s.file, "test_call_site.cpp") || s.line != line) {
      return ::testing::AssertionFailure()
             << s.op << " reported " << (s.file.empty() ? "no site" : s.file) << ":" << s.line
             << ", expected test_call_site.cpp:" << line;
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::string> names(const std::vector<SeenOp>& seen) {
  std::vector<std::string> out;
  for (const SeenOp& s : seen) out.push_back(s.op);
  return out;
}

using Names = std::vector<std::string>;

TEST(CallSite, FreeFunctionReportsTheCallersLine) {
  Tensor a = ones({4}), b = ones({4});
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  const auto [sum_ab, line] = std::pair(add(a, b), __LINE__);
  EXPECT_EQ(names(rec.seen), Names({"add"}));
  EXPECT_TRUE(all_at(rec.seen, line));
}

TEST(CallSite, ScalarOverloadForwardsTheCallersLine) {
  // add(Tensor, Scalar) calls add(Tensor, Tensor) after wrapping the number.
  Tensor a = ones({4});
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  const auto [sum_a1, line] = std::pair(add(a, 1.5), __LINE__);
  EXPECT_EQ(names(rec.seen), Names({"add"}));
  EXPECT_TRUE(all_at(rec.seen, line));
}

TEST(CallSite, TensorMethodsReportTheCallersLine) {
  Tensor a = ones({2, 2}), b = ones({2, 2});
  SiteRecorder rec;
  {
    ops::DispatchModeGuard guard(&rec);
    const auto [prod, line] = std::pair(a.mul(b), __LINE__);
    EXPECT_EQ(names(rec.seen), Names({"mul"}));
    EXPECT_TRUE(all_at(rec.seen, line));
  }
  rec.seen.clear();
  {
    ops::DispatchModeGuard guard(&rec);
    const auto [flat, line] = std::pair(a.view({4}), __LINE__);
    EXPECT_EQ(names(rec.seen), Names({"view"}));
    EXPECT_TRUE(all_at(rec.seen, line));
  }
  rec.seen.clear();
  {
    ops::DispatchModeGuard guard(&rec);
    const auto [total, line] = std::pair(a.sum(), __LINE__);
    EXPECT_EQ(names(rec.seen), Names({"sum"}));
    EXPECT_TRUE(all_at(rec.seen, line));
  }
  rec.seen.clear();
  {
    ops::DispatchModeGuard guard(&rec);
    const auto [self, line] = std::pair(&a.add_(b), __LINE__);
    EXPECT_EQ(names(rec.seen), Names({"add_"}));
    EXPECT_TRUE(all_at(rec.seen, line));
  }
}

TEST(CallSite, CompositeOpsReportTheCallersLineForTheOpsInside) {
  // linear is written in other ops (addmm here, with a bias and 2-D input): every op inside it
  // reports the test's line, not a line of kiln's sources.
  Tensor x = ones({2, 3}), w = ones({4, 3}), bias = ones({4});
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  const auto [y, line] = std::pair(linear(x, w, bias), __LINE__);
  std::vector<std::string> seen = names(rec.seen);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "linear");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "addmm"), seen.end());
  EXPECT_TRUE(all_at(rec.seen, line));
}

TEST(CallSite, LossFunctionsReportTheCallersLineForEveryOp) {
  // cross_entropy's wrapper runs several ops itself.
  Tensor logits = ones({2, 3}), target = tensor({0, 2});
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  const auto [loss, line] = std::pair(cross_entropy(logits, target), __LINE__);
  EXPECT_TRUE(all_at(rec.seen, line));
}

TEST(CallSite, OperatorsNameNoSiteOfTheirOwn) {
  Tensor a = ones({4}), b = ones({4});
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  Tensor c = a + b;
  c += a;
  Tensor d = -c;
  ASSERT_EQ(names(rec.seen), Names({"add", "add_", "neg"}));
  for (const SeenOp& s : rec.seen) {
    EXPECT_EQ(s.file, "") << s.op;
    EXPECT_EQ(s.line, 0u) << s.op;
  }
}

TEST(CallSite, OperatorsInsideAnEnclosingScopeKeepItsSite) {
  Tensor a = ones({4}), b = ones({4});
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  const kiln::SourceLocation here = kiln::SourceLocation::current();
  ops::CallSiteScope scope(&here);
  Tensor c = a * b;
  EXPECT_EQ(names(rec.seen), Names({"mul"}));
  EXPECT_TRUE(all_at(rec.seen, here.line()));
}

TEST(CallSite, OutermostScopeWinsAndNothingIsLeftBehind) {
  EXPECT_EQ(ops::current_call_site(), nullptr);
  const kiln::SourceLocation outer = kiln::SourceLocation::current();
  const kiln::SourceLocation inner = kiln::SourceLocation::current();
  {
    ops::CallSiteScope a(&outer);
    EXPECT_EQ(ops::current_call_site(), &outer);
    {
      ops::CallSiteScope b(&inner);
      EXPECT_EQ(ops::current_call_site(), &outer);
    }
    EXPECT_EQ(ops::current_call_site(), &outer);
  }
  EXPECT_EQ(ops::current_call_site(), nullptr);
  {
    ops::CallSiteScope none(ops::no_call_site());
    EXPECT_EQ(ops::current_call_site(), nullptr);
    ops::CallSiteScope b(&inner);  // blocked: the no-site scope is outermost
    EXPECT_EQ(ops::current_call_site(), nullptr);
  }
  {
    ops::CallSiteScope null_site(nullptr);  // sets nothing
    ops::CallSiteScope b(&inner);
    EXPECT_EQ(ops::current_call_site(), &inner);
  }
  EXPECT_EQ(ops::current_call_site(), nullptr);
}

TEST(CallSite, AFailingCallLeavesNoSiteBehind) {
  Tensor a = ones({3}), b = ones({4});
  EXPECT_THROW((void)add(a, b), Error);
  EXPECT_EQ(ops::current_call_site(), nullptr);
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  const auto [twice, line] = std::pair(mul(b, b), __LINE__);
  EXPECT_TRUE(all_at(rec.seen, line));
}

TEST(CallSite, ItemRunsNoOpAndLeavesNoSiteBehind) {
  // item() is no op call: a dispatch mode sees nothing. It holds the caller's site while it runs
  // (for capture's graph-break hook) and restores the empty state afterwards.
  Tensor t = full({}, 2.5);
  SiteRecorder rec;
  ops::DispatchModeGuard guard(&rec);
  EXPECT_EQ(t.item<double>(), 2.5);
  EXPECT_EQ(t.item().to<double>(), 2.5);
  EXPECT_TRUE(rec.seen.empty());
  EXPECT_EQ(ops::current_call_site(), nullptr);
}

}  // namespace
}  // namespace kiln
