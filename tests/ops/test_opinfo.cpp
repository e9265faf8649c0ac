// Registry-wide op-info tests: every op's samples drive checks that need no per-op code —
// meta functions agree with eager outputs, in-place and out= variants agree with the functional
// op, and results do not depend on the inputs' memory layout.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "test_util.h"

namespace kiln {
namespace {

using ops::IValue;
using ops::OpDef;
using ops::OpRegistry;
using ops::Stack;

// Ops whose output values are unspecified (uninitialized memory): only metadata is compared.
bool values_unspecified(const OpDef& op) {
  return op.name() == "empty" || op.name() == "empty_strided" || op.name() == "empty_like";
}

Tensor to_meta(const Tensor& t) {
  Tensor out(std::make_shared<TensorImpl>(make_storage(t.storage()->nbytes(), Device::meta()),
                                          t.dtype(), t.sym_sizes(), t.sym_strides(),
                                          t.sym_storage_offset()));
  out.impl()->set_wrapped_number(t.impl()->is_wrapped_number());
  return out;
}

Stack map_tensors(const Stack& args, const std::function<Tensor(const Tensor&)>& f) {
  Stack out;
  for (const IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined()) {
      out.emplace_back(f(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> items;
      for (const Tensor& t : v.to_tensor_list()) items.push_back(t.defined() ? f(t) : t);
      out.emplace_back(std::move(items));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

// A copy in fresh storage with the same sizes, strides and offset (non-dense layouts included).
Tensor copy_of(const Tensor& t) {
  if (t.impl()->is_wrapped_number()) return t;
  Tensor c(std::make_shared<TensorImpl>(make_storage(t.storage()->nbytes(), t.device()), t.dtype(),
                                        t.sym_sizes(), t.sym_strides(), t.sym_storage_offset()));
  c.copy_(t);
  return c;
}

bool has_tensor_arg(const Stack& args) {
  for (const IValue& v : args) {
    if ((v.is_tensor() && v.to_tensor().defined()) || v.is_tensor_list()) return true;
  }
  return false;
}

Tensor contiguous_copy(const Tensor& t) {
  if (t.impl()->is_wrapped_number()) return t;
  Tensor c = empty(t.sizes(), t.dtype());
  c.copy_(t);
  return c;
}

std::vector<const OpDef*> ops_with_samples() {
  std::vector<const OpDef*> out;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant == ops::Variant::Functional && op->samples) out.push_back(op);
  }
  return out;
}

std::string where(const OpDef& op, const ops::Sample& s) {
  return op.full_name() + " [" + s.description + "]";
}

TEST(OpInfo, EveryFunctionalOpHasSamples) {
  std::vector<std::string> missing;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional) continue;
    if (!op->samples) missing.push_back(op->full_name());
  }
  EXPECT_TRUE(missing.empty()) << "ops without op-info samples: "
                               << fmt::format("{}", fmt::join(missing, ", "));
}

TEST(OpInfo, EveryOpHasACpuKernel) {
  for (const OpDef* op : OpRegistry::instance().all()) {
    EXPECT_TRUE(op->has_kernel(DeviceType::CPU)) << op->full_name();
  }
}

TEST(OpInfo, SchemasRoundTrip) {
  for (const OpDef* op : OpRegistry::instance().all()) {
    ops::Schema again = ops::parse_schema(op->schema.str());
    EXPECT_EQ(again.str(), op->schema.str()) << op->full_name();
  }
}

TEST(OpInfo, MetaMatchesEager) {
  for (const OpDef* op : ops_with_samples()) {
    for (const ops::Sample& s : op->samples()) {
      std::vector<Tensor> eager;
      try {
        eager = ops::call(*op, map_tensors(s.args, copy_of));
      } catch (const Error&) {
        continue;  // samples that exercise errors are compared by the oracle test
      }
      std::vector<Tensor> meta;
      try {
        meta = ops::call(*op, map_tensors(s.args, to_meta));
      } catch (const Error& e) {
        // Ops whose output shape depends on the data (nonzero, masked_select, boolean indexing)
        // cannot run on the meta device; they say so and nothing else may fail here.
        if (std::string_view(e.what()).find("data-dependent") != std::string_view::npos) continue;
        throw;
      }
      ASSERT_EQ(meta.size(), eager.size()) << where(*op, s);
      for (size_t i = 0; i < eager.size(); ++i) {
        // Backward ops return None for the outputs their output_mask leaves out.
        ASSERT_EQ(meta[i].defined(), eager[i].defined()) << where(*op, s) << " output " << i;
        if (!eager[i].defined()) continue;
        EXPECT_EQ(meta[i].dtype(), eager[i].dtype()) << where(*op, s) << " output " << i;
        EXPECT_EQ(IntList(meta[i].sizes()), IntList(eager[i].sizes()))
            << where(*op, s) << " output " << i;
        if (op->kind == ops::OpKind::Structured || op->kind == ops::OpKind::View) {
          EXPECT_EQ(IntList(meta[i].strides()), IntList(eager[i].strides()))
              << where(*op, s) << " output " << i;
        }
        // Factories without tensor arguments stay on their device argument.
        if (has_tensor_arg(s.args)) {
          EXPECT_TRUE(meta[i].is_meta()) << where(*op, s);
        }
      }
    }
  }
}

TEST(OpInfo, LayoutDoesNotChangeValues) {
  for (const OpDef* op : ops_with_samples()) {
    if (op->is_random || values_unspecified(*op)) continue;
    for (const ops::Sample& s : op->samples()) {
      std::vector<Tensor> a, b;
      try {
        a = ops::call(*op, map_tensors(s.args, copy_of));
      } catch (const Error&) {
        continue;
      }
      b = ops::call(*op, map_tensors(s.args, contiguous_copy));
      ASSERT_EQ(a.size(), b.size());
      // Reductions may sum in another order for another layout: the op's tolerance applies.
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].defined(), b[i].defined()) << where(*op, s) << " output " << i;
        if (!a[i].defined()) continue;
        EXPECT_TRUE(testing::all_close(a[i], b[i], op->sample_rtol, op->sample_atol))
            << where(*op, s) << " output " << i;
      }
    }
  }
}

TEST(OpInfo, InPlaceVariantMatchesFunctional) {
  for (const OpDef* op : ops_with_samples()) {
    if (!op->inplace || op->is_random) continue;
    for (const ops::Sample& s : op->samples()) {
      std::vector<Tensor> expected;
      try {
        expected = ops::call(*op, map_tensors(s.args, copy_of));
      } catch (const Error&) {
        continue;
      }
      Stack args = map_tensors(s.args, copy_of);
      Tensor self = args[0].to_tensor();
      bool castable = can_cast(expected[0].dtype(), self.dtype());
      bool same_shape = IntList(expected[0].sizes()) == IntList(self.sizes());
      if (!castable || !same_shape) {
        // The in-place form must refuse, with an error rather than a wrong result.
        EXPECT_THROW(ops::call(*op->inplace, args), Error) << where(*op, s);
        continue;
      }
      uint32_t version = self._version();
      std::vector<Tensor> got = ops::call(*op->inplace, args);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_TRUE(got[0].is_same(self)) << where(*op, s) << ": in-place must return self";
      EXPECT_GT(self._version(), version) << where(*op, s) << ": version counter not bumped";
      EXPECT_TRUE(testing::all_close(self, expected[0].to(self.dtype()), 0.0, 0.0))
          << where(*op, s);
    }
  }
}

TEST(OpInfo, OutVariantMatchesFunctional) {
  for (const OpDef* op : ops_with_samples()) {
    if (!op->out || op->is_random || values_unspecified(*op)) continue;
    for (const ops::Sample& s : op->samples()) {
      std::vector<Tensor> expected;
      try {
        expected = ops::call(*op, map_tensors(s.args, copy_of));
      } catch (const Error&) {
        continue;
      }
      Stack args = map_tensors(s.args, copy_of);
      ops::normalize_args(op->schema, args);  // defaults first, so out= lands after them
      std::vector<Tensor> outs;
      for (const Tensor& e : expected) {
        outs.push_back(empty({0}, e.dtype()));  // resized by the call
        args.emplace_back(outs.back());
      }
      std::vector<Tensor> got = ops::call(*op->out, args);
      ASSERT_EQ(got.size(), expected.size()) << where(*op, s);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(got[i].is_same(outs[i])) << where(*op, s) << ": out= must return out";
        EXPECT_TRUE(testing::all_close(outs[i], expected[i], 0.0, 0.0)) << where(*op, s);
      }
    }
  }
}

}  // namespace
}  // namespace kiln
