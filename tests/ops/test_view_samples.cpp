// Every view op's samples, run on CPU and on the meta device: the same geometry must come out
// (the meta functions read no data), and view outputs must alias their input's storage.
#include "test_view_util.h"

#include <kiln/ops/registry.h>

#include <set>
#include <string>

namespace kiln {
namespace {

using testing::shares_storage;
using testing::to_meta;

const std::vector<std::string> kViewFamily = {"view",
                                              "reshape",
                                              "flatten.using_ints",
                                              "unflatten.int",
                                              "permute",
                                              "transpose.int",
                                              "t",
                                              "squeeze",
                                              "squeeze.dim",
                                              "squeeze.dims",
                                              "unsqueeze",
                                              "expand",
                                              "expand_as",
                                              "broadcast_to",
                                              "broadcast_tensors",
                                              "narrow",
                                              "slice.Tensor",
                                              "select.int",
                                              "unbind.int",
                                              "split.Tensor",
                                              "split_with_sizes",
                                              "chunk",
                                              "as_strided",
                                              "movedim.int",
                                              "movedim.intlist",
                                              "diagonal"};

// Ops that may return a copy (reshape when the strides don't allow a view).
const std::set<std::string> kMayCopy = {"reshape", "flatten.using_ints"};

ops::IValue meta_arg(const ops::IValue& v) {
  if (v.is_tensor()) return to_meta(v.to_tensor());
  if (v.is_tensor_list()) {
    std::vector<Tensor> out;
    for (const Tensor& t : v.to_tensor_list()) out.push_back(to_meta(t));
    return out;
  }
  return v;
}

TEST(ViewSamples, MetaMatchesEagerAndOutputsAlias) {
  for (const std::string& name : kViewFamily) {
    const ops::OpDef& op = ops::OpRegistry::instance().get(name);
    ASSERT_TRUE(static_cast<bool>(op.samples)) << name << " has no samples";
    std::vector<ops::Sample> samples = op.samples();
    EXPECT_GE(samples.size(), 2u) << name;
    for (const ops::Sample& sample : samples) {
      SCOPED_TRACE(name + ": " + sample.description);
      std::vector<Tensor> eager = ops::call(op, sample.args);
      ops::Stack meta_args;
      for (const ops::IValue& v : sample.args) meta_args.push_back(meta_arg(v));
      std::vector<Tensor> meta = ops::call(op, meta_args);
      ASSERT_EQ(eager.size(), meta.size());
      for (size_t i = 0; i < eager.size(); ++i) {
        EXPECT_TRUE(meta[i].is_meta());
        EXPECT_EQ(testing::vec(meta[i].sizes()), testing::vec(eager[i].sizes()));
        EXPECT_EQ(testing::vec(meta[i].strides()), testing::vec(eager[i].strides()));
        EXPECT_EQ(meta[i].storage_offset(), eager[i].storage_offset());
        EXPECT_EQ(meta[i].dtype(), eager[i].dtype());
        // The input each output views: tensors[i] for broadcast_tensors, else self.
        const ops::IValue& first = sample.args[0];
        Tensor input = first.is_tensor_list() ? first.to_tensor_list()[i] : first.to_tensor();
        if (!kMayCopy.count(name)) {
          EXPECT_TRUE(shares_storage(eager[i], input));
        }
        // Every element a view reads lies inside its storage.
        if (eager[i].numel() > 0) {
          int64_t last = eager[i].storage_offset();
          for (int64_t d = 0; d < eager[i].dim(); ++d) {
            last += (eager[i].size(d) - 1) * eager[i].stride(d);
          }
          EXPECT_LT(last * static_cast<int64_t>(eager[i].itemsize()),
                    static_cast<int64_t>(eager[i].storage()->nbytes()));
        }
      }
    }
  }
}

TEST(ViewSamples, ReshapeAliasesExactlyWhenAViewExists) {
  const ops::OpDef& op = ops::OpRegistry::instance().get("reshape");
  for (const ops::Sample& sample : op.samples()) {
    SCOPED_TRACE(sample.description);
    const Tensor& self = sample.args[0].to_tensor();
    Tensor out = ops::call(op, sample.args)[0];
    bool viewable = true;
    try {
      ops::call(ops::OpRegistry::instance().get("view"), sample.args);
    } catch (const Error&) {
      viewable = false;
    }
    EXPECT_EQ(shares_storage(out, self), viewable);
  }
}

}  // namespace
}  // namespace kiln
