// The prim set is closed: every op is a prim, a composite or decomposable, and running an op's
// op-info samples as prims (decompositions expanded recursively) gives what its eager kernel
// gives: exactly for integer and bool results, within 1e-5 relative for float32, and the same
// Philox draws for random ops.
#include <kiln/decomp/prims.h>
#include <kiln/kiln.h>
#include "opinfo_selection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

namespace kiln {
namespace {

using ops::IValue;
using ops::OpDef;
using ops::OpRegistry;
using ops::Stack;

// KILN_DECOMP_OPS=a,b,c restricts the sample walk to those ops (full names).
bool selected(const OpDef& op) { return testing::selected_by("KILN_DECOMP_OPS", op); }

// Error samples whose check reads the data (a value range), which a decomposition cannot do
// without a data-dependent assert: PyTorch's decompositions skip these checks too.
const std::set<std::string> kDataCheckedErrors = {"binary_cross_entropy [input above 1]"};

// Fresh copies of the tensor arguments, so that ops writing an argument (fill_, uniform_) start
// from the same values on both paths.
Stack copy_args(const Stack& args) {
  Stack out = args;
  for (IValue& v : out) {
    if (v.is_tensor() && v.to_tensor().defined()) {
      v = IValue(v.to_tensor().clone());
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list = v.to_tensor_list();
      for (Tensor& t : list) {
        if (t.defined()) t = t.clone();
      }
      v = IValue(std::move(list));
    }
  }
  return out;
}

bool is_exact(DType d) { return !is_floating_point(d); }

// rtol/atol by dtype: the 1e-5 relative for float32, float64 near its epsilon, half types
// at their own precision.
std::pair<double, double> tolerance(DType d) {
  switch (d) {
    case DType::Float64:
      return {1e-10, 1e-12};
    case DType::Float32:
      return {1e-5, 1e-6};
    default:
      return {1e-2, 1e-3};
  }
}

void expect_same(const Tensor& eager, const Tensor& prims, const std::string& what, bool values) {
  ASSERT_EQ(eager.defined(), prims.defined()) << what;
  if (!eager.defined()) return;
  ASSERT_EQ(eager.dtype(), prims.dtype()) << what;
  ASSERT_EQ(eager.sizes().vec(), prims.sizes().vec()) << what;
  if (!values || eager.numel() == 0) return;
  const Tensor e = eager.to(kFloat64).contiguous();
  const Tensor p = prims.to(kFloat64).contiguous();
  const std::vector<double> ev = e.tolist<double>();
  const std::vector<double> pv = p.tolist<double>();
  const auto [rtol, atol] = tolerance(eager.dtype());
  int reported = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    const double a = ev[i];
    const double b = pv[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    const bool ok = !is_exact(eager.dtype()) && std::abs(a - b) <= atol + rtol * std::abs(a);
    if (!ok && reported++ < 5) {
      ADD_FAILURE() << what << " element " << i << ": eager " << a << ", as prims " << b;
    }
  }
}

TEST(Decompositions, EveryOpIsAPrimOrDecomposable) {
  std::vector<std::string> missing;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional) continue;
    const bool prim = decomp::is_prim(*op);
    // An extern prim may keep a decomposition: autograd differentiates through it (a backward
    // kernel without a derivative of its own); other prims are what decompositions end in.
    if (prim && op->decomposition && decomp::prim_class(*op) != decomp::PrimClass::Extern) {
      ADD_FAILURE() << op->full_name() << " is a prim but declares a decomposition";
    }
    if (!prim && !decomp::is_decomposable(*op)) missing.push_back(op->full_name());
  }
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  EXPECT_TRUE(missing.empty()) << missing.size()
                               << " ops are neither prims nor decomposable:" << list;
}

TEST(Decompositions, PrimTableNamesRegisteredFunctionalOps) {
  std::set<std::string_view> seen;
  for (const decomp::PrimInfo& p : decomp::prim_table()) {
    EXPECT_TRUE(seen.insert(p.name).second) << p.name << " is listed twice";
    const OpDef* op = OpRegistry::instance().find(p.name);
    ASSERT_NE(op, nullptr) << p.name << " is in the prim set but not in the registry";
    EXPECT_EQ(op->variant, ops::Variant::Functional) << p.name;
    EXPECT_NE(op->kind, ops::OpKind::Composite) << p.name << ": a composite is no prim";
  }
}

TEST(Decompositions, PrimClassOfVariantsIsTheirFunctionalOps) {
  EXPECT_EQ(decomp::prim_class(OpRegistry::instance().get("add_")), decomp::PrimClass::Elementwise);
  EXPECT_EQ(decomp::prim_class(OpRegistry::instance().get("sum")), decomp::PrimClass::Reduction);
  EXPECT_FALSE(decomp::is_prim(OpRegistry::instance().get("gelu")));
}

TEST(Decompositions, AnOpThatIsNeitherIsNamed) {
  // A declaration (not registered) with no path to prims: the mode refuses it by name.
  ops::OpDef orphan;
  orphan.schema = ops::parse_schema("test_decomp_orphan(Tensor self) -> Tensor");
  decomp::DecomposeMode mode;
  Stack args{IValue(ones({2}))};
  try {
    mode.dispatch(orphan, args);
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test_decomp_orphan is neither a prim nor decomposable"),
              std::string::npos)
        << e.what();
  }
}

TEST(Decompositions, SamplesAsPrimsMatchEagerKernels) {
  int checked = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples) continue;
    if (decomp::is_prim(*op) || !selected(*op)) continue;
    const bool values = !testing::uninitialized_output(*op);
    for (const ops::Sample& s : op->samples()) {
      const std::string what = op->full_name() + " [" + s.description + "]";
      SCOPED_TRACE(what);
      autograd::NoGradGuard no_grad;
      std::vector<Tensor> eager;
      Stack eager_args = copy_args(s.args);
      try {
        manual_seed(11);
        eager = ops::call(*op, eager_args);
      } catch (const Error&) {
        // An error sample: the decomposition must refuse it too.
        if (kDataCheckedErrors.count(what)) continue;
        manual_seed(11);
        EXPECT_THROW(decomp::call_as_prims(*op, copy_args(s.args)), Error);
        continue;
      }
      std::set<std::string> reached;
      Stack prim_args = copy_args(s.args);
      std::vector<Tensor> prims;
      try {
        manual_seed(11);
        prims = decomp::call_as_prims(*op, prim_args,
                                      [&](const OpDef& p) { reached.insert(p.full_name()); });
      } catch (const Error& e) {
        ADD_FAILURE() << "as prims: " << e.what();
        continue;
      }
      ASSERT_EQ(eager.size(), prims.size());
      for (size_t i = 0; i < eager.size(); ++i) {
        expect_same(eager[i], prims[i], what + " output " + std::to_string(i), values);
      }
      // Ops writing an argument leave the same values there.
      for (size_t i = 0; i < s.args.size() && i < op->schema.arguments.size(); ++i) {
        if (op->schema.arguments[i].is_mutable && eager_args[i].is_tensor()) {
          expect_same(eager_args[i].to_tensor(), prim_args[i].to_tensor(),
                      what + " argument " + std::to_string(i), values);
        }
      }
      for (const std::string& name : reached) {
        EXPECT_TRUE(decomp::is_prim(OpRegistry::instance().get(name))) << name;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace kiln
