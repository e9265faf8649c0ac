// kiln::compile(ddp) splits each captured graph at DDP's bucket boundaries (PyTorch's
// DDPOptimizer), in a world of one (this process): the pieces and their parameters against DDP's
// own buckets, the switch that turns it off, results against the eager model, the ddp log
// channel, and the overlap on a process group that records when each bucket's all-reduce starts.
// The multi-process runs are DistributedDDP.CompiledSplit* (test_ddp.cpp).
#include <gtest/gtest.h>
#include <kiln/aot/aot.h>
#include <kiln/kiln.h>

#include "capture/capture_test_util.h"
#include "distributed/recording_group.h"
#include "distributed/world_of_one.h"
#include "test_util.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace kiln::nn {
namespace {

using NameSets = std::vector<std::set<std::string>>;

class DistributedDDPCompiledSplit : public testing::WorldOfOne {};

// Linear layers at Sequential indices 0, 2 (and 4 for three widths), tanh between them.
std::shared_ptr<Sequential> mlp(uint64_t seed, const std::vector<int64_t>& widths) {
  manual_seed(seed);
  auto model = std::make_shared<Sequential>();
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    model->push_back(std::make_shared<Linear>(widths[i], widths[i + 1]));
    if (i + 2 < widths.size()) model->push_back(std::make_shared<Tanh>());
  }
  return model;
}

Tensor loss_of(Module& model, uint64_t seed) {
  manual_seed(seed);
  Tensor x = randn({5, 4}), y = randn({5, 3});
  return mse_loss(model(x), y);
}

// DDP's buckets as sets of parameter names without the "module." prefix, last bucket first: the
// order of the graph pieces that hold them.
NameSets buckets_in_graph_order(const DistributedDataParallel& ddp) {
  NameSets sets;
  for (const auto& bucket : ddp.bucket_parameter_names()) {
    std::set<std::string> names;
    for (const std::string& name : bucket) names.insert(name.substr(std::string("module.").size()));
    sets.insert(sets.begin(), std::move(names));
  }
  return sets;
}

// Compiles graphs with `inner` (and its traits), recording the parameters of each one it is
// given.
NamedBackend recording(std::shared_ptr<NameSets> pieces, std::string inner) {
  const BackendTraits traits = backend_traits(inner);
  return {"recording",
          [pieces, inner](const graph::Graph& g, std::span<const Tensor> examples,
                          const BackendContext& context) {
            std::set<std::string> names;
            for (const graph::Node* in : g.inputs()) {
              if (in->role == graph::InputRole::Parameter) names.insert(in->label);
            }
            pieces->push_back(std::move(names));
            return lookup_backend(inner)(g, examples, context);
          },
          traits};
}

DistributedDataParallelOptions bucket_cap_bytes(double bytes) {
  DistributedDataParallelOptions options;
  options.bucket_cap_mb = bytes / (1024 * 1024);
  return options;
}

TEST_F(DistributedDDPCompiledSplit, PiecesHoldTheParametersOfDdpsBuckets) {
  // 4-8-8-3 under a 100-byte cap: [4.bias, 4.weight] (108 bytes), [2.*], [0.*].
  auto ddp = std::make_shared<DistributedDataParallel>(mlp(1, {4, 8, 8, 3}), bucket_cap_bytes(100));
  auto pieces = std::make_shared<NameSets>();
  compile(ddp, {.backend = recording(pieces, "aot_eager")});
  loss_of(*ddp, 5).backward();
  ASSERT_EQ(ddp->bucket_parameter_names().size(), 3u);
  EXPECT_EQ(*pieces, buckets_in_graph_order(*ddp));
  EXPECT_EQ(*pieces,
            (NameSets{{"0.bias", "0.weight"}, {"2.bias", "2.weight"}, {"4.bias", "4.weight"}}));
}

TEST_F(DistributedDDPCompiledSplit, ParametersWithinOneBucketMakeOnePiece) {
  auto ddp = std::make_shared<DistributedDataParallel>(mlp(1, {4, 8, 8, 3}));  // 25 MiB
  auto pieces = std::make_shared<NameSets>();
  compile(ddp, {.backend = recording(pieces, "aot_eager")});
  loss_of(*ddp, 5).backward();
  ASSERT_EQ(pieces->size(), 1u);
  EXPECT_EQ(pieces->front().size(), 6u);
}

TEST_F(DistributedDDPCompiledSplit, OptimizeDdpFalseCompilesOneGraph) {
  auto ddp = std::make_shared<DistributedDataParallel>(mlp(1, {4, 8, 8, 3}), bucket_cap_bytes(100));
  auto pieces = std::make_shared<NameSets>();
  compile(ddp, {.backend = recording(pieces, "aot_eager"), .options = {{"optimize_ddp", "false"}}});
  loss_of(*ddp, 5).backward();
  ASSERT_EQ(pieces->size(), 1u);
  EXPECT_EQ(pieces->front().size(), 6u);
}

TEST_F(DistributedDDPCompiledSplit, AnOptimizeDdpValueOtherThanTrueOrFalseIsAnError) {
  auto ddp = std::make_shared<DistributedDataParallel>(mlp(1, {4, 8, 3}));
  try {
    compile(ddp, {.options = {{"optimize_ddp", "yes"}}});
    ADD_FAILURE() << "expected a kiln::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("options[\"optimize_ddp\"] must be \"true\" or "
                                         "\"false\", got \"yes\""),
              std::string::npos)
        << e.what();
  }
}

// The split model against the same model run eagerly (no DDP: a world of one averages nothing),
// forward and backward, for the aot_eager and inductor backends.
TEST_F(DistributedDDPCompiledSplit, ResultsMatchTheEagerModel) {
  for (const char* backend : {"aot_eager", "inductor"}) {
    auto plain = mlp(2, {4, 8, 8, 3});
    auto inner = mlp(2, {4, 8, 8, 3});
    auto ddp = compile(std::make_shared<DistributedDataParallel>(inner, bucket_cap_bytes(100)),
                       {.backend = std::string(backend)});
    for (uint64_t step = 0; step < 2; ++step) {
      plain->zero_grad();
      ddp->zero_grad();
      manual_seed(30 + step);
      const Tensor x = randn({5, 4});
      const Tensor want = (*plain)(x), got = (*ddp)(x);
      EXPECT_TRUE(testing::all_close(got, want, 1e-6, 1e-6)) << backend << " step " << step;
      (want * want).sum().backward();
      (got * got).sum().backward();
      const auto want_params = plain->parameters(), got_params = inner->parameters();
      ASSERT_EQ(want_params.size(), got_params.size());
      for (size_t i = 0; i < want_params.size(); ++i) {
        ASSERT_TRUE(got_params[i].grad().defined()) << backend << " " << i;
        EXPECT_TRUE(testing::all_close(got_params[i].grad(), want_params[i].grad(), 1e-6, 1e-6))
            << backend << " step " << step << " parameter " << i;
      }
    }
  }
}

// Traced with symbolic sizes (dynamic=true), each piece binds the batch size from its inputs:
// two batch sizes, one compilation, eager's results.
TEST_F(DistributedDDPCompiledSplit, SymbolicBatchSizesRunThroughThePieces) {
  for (const char* backend : {"aot_eager", "inductor"}) {
    auto plain = mlp(6, {4, 8, 8, 3});
    auto inner = mlp(6, {4, 8, 8, 3});
    auto pieces = std::make_shared<NameSets>();
    auto ddp = compile(std::make_shared<DistributedDataParallel>(inner, bucket_cap_bytes(100)),
                       {.dynamic = true, .backend = recording(pieces, backend)});
    for (int64_t rows : {5, 7}) {
      plain->zero_grad();
      ddp->zero_grad();
      manual_seed(40 + static_cast<uint64_t>(rows));
      const Tensor x = randn({rows, 4});
      const Tensor want = (*plain)(x), got = (*ddp)(x);
      EXPECT_TRUE(testing::all_close(got, want, 1e-6, 1e-6)) << backend << " rows " << rows;
      (want * want).sum().backward();
      (got * got).sum().backward();
      for (size_t i = 0; i < plain->parameters().size(); ++i) {
        EXPECT_TRUE(testing::all_close(inner->parameters()[i].grad(), plain->parameters()[i].grad(),
                                       1e-6, 1e-6))
            << backend << " rows " << rows << " parameter " << i;
      }
    }
    EXPECT_EQ(pieces->size(), 3u) << backend;  // compiled once, in three pieces
  }
}

TEST_F(DistributedDDPCompiledSplit, TheDdpChannelLogsThePieces) {
  testing::LogCapture logs("ddp");
  auto ddp = compile(
      std::make_shared<DistributedDataParallel>(mlp(1, {4, 8, 8, 3}), bucket_cap_bytes(100)),
      {.backend = std::string("aot_eager")});
  loss_of(*ddp, 5).backward();
  ASSERT_EQ(logs.records.size(), 1u) << logs.all();
  EXPECT_EQ(logs.count("3 pieces for buckets of 100 bytes (then 100)"), 1u) << logs.all();
  EXPECT_EQ(logs.count("piece 2: ops ["), 1u) << logs.all();
  EXPECT_EQ(logs.count("2 parameters (108 bytes): "), 1u) << logs.all();
}

// Records when each compiled backward graph starts and ends, on the list the process group
// records its all-reduces on.
Backend backward_recording(std::vector<std::string>& events) {
  const Backend eager = lookup_backend("eager");
  return aot::aot_autograd(
      {.forward_compiler = eager,
       .backward_compiler = [&events, eager](const graph::Graph& g, std::span<const Tensor> ex,
                                             const BackendContext& context) -> CompiledGraph {
         CompiledGraph run = eager(g, ex, context);
         const std::string name = context.graph_name;
         return [&events, run, name](std::span<const Tensor> inputs) {
           events.push_back("start " + name);
           std::vector<Tensor> grads = run(inputs);
           events.push_back("end " + name);
           return grads;
         };
       }});
}

std::string joined(const std::vector<std::string>& events) {
  std::string s;
  for (const std::string& e : events) s += e + "\n";
  return s;
}

// The overlap the split buys: the last layer's bucket is all-reduced as soon as the backward of
// its piece ends, before the first piece's backward starts. Unsplit, the one backward ends
// before any bucket starts.
TEST(DistributedDDPCompiledSplitOverlap, ABucketStartsBeforeTheEarlierPiecesBackward) {
  for (const bool split : {true, false}) {
    std::vector<std::string> events;
    DistributedDataParallelOptions options = bucket_cap_bytes(40);  // [2.*] (27 values), [0.*] (40)
    options.process_group = std::make_shared<testing::RecordingGroup>(events);
    auto ddp = compile(std::make_shared<DistributedDataParallel>(mlp(4, {4, 8, 3}), options),
                       {.backend = backward_recording(events),
                        .options = {{"optimize_ddp", split ? "true" : "false"}}});
    loss_of(*ddp, 7).backward();
    const auto position = [&](const std::string& part) {
      return std::find_if(events.begin(), events.end(),
                          [&](const std::string& e) { return e.find(part) != std::string::npos; }) -
             events.begin();
    };
    const auto count = [&](const std::string& part) {
      return std::count_if(events.begin(), events.end(),
                           [&](const std::string& e) { return e.find(part) != std::string::npos; });
    };
    ASSERT_EQ(count("all_reduce 27"), 1) << joined(events);
    ASSERT_EQ(count("all_reduce 40"), 1) << joined(events);
    if (split) {
      ASSERT_EQ(count("start "), 2) << joined(events);
      EXPECT_LT(position("end graph 0 of Sequential (piece 1 of 2) (backward)"),
                position("all_reduce 27"))
          << joined(events);
      EXPECT_LT(position("all_reduce 27"),
                position("start graph 0 of Sequential (piece 0 of 2) (backward)"))
          << joined(events);
      EXPECT_LT(position("end graph 0 of Sequential (piece 0 of 2) (backward)"),
                position("all_reduce 40"))
          << joined(events);
    } else {
      ASSERT_EQ(count("start "), 1) << joined(events);
      EXPECT_LT(position("end "), position("all_reduce 27")) << joined(events);
    }
  }
}

}  // namespace
}  // namespace kiln::nn
