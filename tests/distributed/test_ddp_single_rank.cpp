// DistributedDataParallel in a world of one (this process): bucket layout, what reaches .grad,
// no_sync accumulation and the errors. With one rank the average of a gradient is itself, so a
// model without DDP is the reference. The multi-rank behaviour is in test_ddp.cpp.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "distributed/bucket_assignment.h"
#include "distributed/recording_group.h"
#include "distributed/world_of_one.h"
#include "test_util.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kiln::nn {
namespace {

using Names = std::vector<std::vector<std::string>>;

class DistributedDDPSingleRank : public testing::WorldOfOne {};

std::shared_ptr<Sequential> mlp(uint64_t seed) {
  manual_seed(seed);
  return std::make_shared<Sequential>(std::make_shared<Linear>(4, 8), std::make_shared<Tanh>(),
                                      std::make_shared<Linear>(8, 3));
}

Tensor loss_of(Module& model, uint64_t seed) {
  manual_seed(seed);
  Tensor x = randn({5, 4}), y = randn({5, 3});
  return mse_loss(model(x), y);
}

std::vector<double> values(const Tensor& t) { return t.tolist<double>(); }

TEST_F(DistributedDDPSingleRank, BucketsHoldParametersInReverseOrder) {
  DistributedDataParallel ddp(mlp(0));
  EXPECT_EQ(ddp.bucket_parameter_names(),
            (Names{{"module.2.bias", "module.2.weight", "module.0.bias", "module.0.weight"}}));
  // 40 bytes: 2.bias (12) + 2.weight (96) close the first, 0.bias (32) + 0.weight the second.
  DistributedDataParallelOptions options;
  options.bucket_cap_mb = 40.0 / (1024 * 1024);
  DistributedDataParallel small(mlp(0), options);
  EXPECT_EQ(small.bucket_parameter_names(),
            (Names{{"module.2.bias", "module.2.weight"}, {"module.0.bias", "module.0.weight"}}));
}

// A compiled module inside DDP (PyTorch's usual order is the other way round, see below): the
// compiled backward's gradients reach the buckets through the parameters' hooks as eager ones do.
TEST_F(DistributedDDPSingleRank, ACompiledModuleTrainsLikeTheEagerOne) {
  auto plain = mlp(2);
  auto inner = mlp(2);
  DistributedDataParallel ddp(compile(inner));
  for (uint64_t step = 0; step < 3; ++step) {
    plain->zero_grad();
    ddp.zero_grad();
    loss_of(*plain, 10 + step).backward();
    loss_of(ddp, 10 + step).backward();
    const auto want = plain->parameters(), got = inner->parameters();
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(got[i].grad().defined()) << step << " " << i;
      EXPECT_TRUE(testing::all_close(got[i].grad(), want[i].grad(), 1e-5, 1e-6))
          << step << " " << i;
    }
  }
}

// kiln::compile(ddp) compiles the wrapped module in place and keeps DDP's forward eager; a DDP
// module met while capturing a graph is a clear error, not a forward traced once.
TEST_F(DistributedDDPSingleRank, CompilingDdpCompilesItsModule) {
  auto plain = mlp(3);
  auto inner = mlp(3);
  auto ddp = std::make_shared<DistributedDataParallel>(inner);
  auto compiled = compile(ddp);
  EXPECT_EQ(compiled.get(), ddp.get());
  for (uint64_t step = 0; step < 2; ++step) {
    plain->zero_grad();
    compiled->zero_grad();
    loss_of(*plain, 20 + step).backward();
    loss_of(*compiled, 20 + step).backward();
    for (size_t i = 0; i < plain->parameters().size(); ++i) {
      EXPECT_TRUE(testing::all_close(inner->parameters()[i].grad(), plain->parameters()[i].grad(),
                                     1e-5, 1e-6))
          << step << " " << i;
    }
  }
  auto traced =
      compile([ddp](const Tensor& x) { return (*ddp)(x)*2.0; }, CompileOptions{.fullgraph = true});
  try {
    traced(randn({5, 4}));
    ADD_FAILURE() << "expected a kiln::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kiln::compile(ddp)"), std::string::npos) << e.what();
  }
}

TEST_F(DistributedDDPSingleRank, GradientsMatchAModelWithoutDDP) {
  auto wrapped = mlp(1);
  DistributedDataParallel ddp(wrapped);
  auto plain = mlp(1);
  loss_of(ddp, 7).backward();
  loss_of(*plain, 7).backward();
  for (size_t i = 0; i < plain->parameters().size(); ++i)
    EXPECT_EQ(values(wrapped->parameters()[i].grad()), values(plain->parameters()[i].grad()))
        << "parameter " << i;
}

TEST_F(DistributedDDPSingleRank, NoSyncThenSyncAccumulatesBothSteps) {
  auto wrapped = mlp(2);
  DistributedDataParallel ddp(wrapped);
  auto plain = mlp(2);
  {
    auto no_sync = ddp.no_sync();
    loss_of(ddp, 8).backward();
  }
  loss_of(ddp, 9).backward();
  loss_of(*plain, 8).backward();
  loss_of(*plain, 9).backward();
  for (size_t i = 0; i < plain->parameters().size(); ++i) {
    std::vector<double> got = values(wrapped->parameters()[i].grad());
    std::vector<double> want = values(plain->parameters()[i].grad());
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-6) << i << "," << k;
  }
}

TEST_F(DistributedDDPSingleRank, FrozenParametersAreLeftOut) {
  auto model = mlp(3);
  model->at<Linear>(0)->weight.requires_grad_(false);
  DistributedDataParallel ddp(model);
  EXPECT_EQ(ddp.bucket_parameter_names(),
            (Names{{"module.2.bias", "module.2.weight", "module.0.bias"}}));
  loss_of(ddp, 7).backward();
  EXPECT_FALSE(model->at<Linear>(0)->weight.grad().defined());
  EXPECT_TRUE(model->at<Linear>(0)->bias.grad().defined());
}

// A second head that forward skips.
class SkipsAHead : public Module {
 public:
  SkipsAHead() : Module("SkipsAHead") {
    used = register_module("used", std::make_shared<Linear>(4, 3));
    skipped = register_module("skipped", std::make_shared<Linear>(4, 3));
  }
  Tensor forward(const Tensor& x) override { return (*used)(x); }
  std::shared_ptr<Linear> used, skipped;
};

TEST_F(DistributedDDPSingleRank, AParameterWithoutGradientIsAnErrorNamingIt) {
  DistributedDataParallel ddp(std::make_shared<SkipsAHead>());
  try {
    loss_of(ddp, 7).backward();
    FAIL() << "backward with unused parameters did not raise";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("2 of 4 parameters got no gradient"), std::string::npos) << message;
    EXPECT_NE(message.find("'module.skipped.weight', 'module.skipped.bias'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("find_unused_parameters=true"), std::string::npos) << message;
  }
}

TEST_F(DistributedDDPSingleRank, FindUnusedParametersGivesZeroGradients) {
  auto model = std::make_shared<SkipsAHead>();
  DistributedDataParallelOptions options;
  options.find_unused_parameters = true;
  DistributedDataParallel ddp(model, options);
  for (int step = 0; step < 2; ++step) loss_of(ddp, 7).backward();
  EXPECT_EQ(values(model->skipped->weight.grad()), std::vector<double>(12, 0.0));
  EXPECT_TRUE(model->used->weight.grad().defined());
}

TEST_F(DistributedDDPSingleRank, BadOptionsAreErrors) {
  DistributedDataParallelOptions options;
  options.bucket_cap_mb = 0;
  try {
    DistributedDataParallel ddp(mlp(0), options);
    FAIL() << "bucket_cap_mb = 0 did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bucket_cap_mb must be positive, got 0"),
              std::string::npos)
        << e.what();
  }
}

// The overlap: a bucket's all-reduce is issued as soon as its gradients are in, while backward
// still computes the earlier layers' gradients.
TEST(DistributedDDPOverlap, BucketsStartDuringBackward) {
  std::vector<std::string> events;
  auto model = mlp(4);
  DistributedDataParallelOptions options;
  options.process_group = std::make_shared<testing::RecordingGroup>(events);
  options.bucket_cap_mb = 40.0 / (1024 * 1024);  // [2.bias, 2.weight] (27 values), [0.*] (40)
  DistributedDataParallel ddp(model, options);
  for (const auto& [name, param] : model->named_parameters())
    param.register_hook([&events, name = name](const Tensor&) {
      events.push_back("grad " + name);
      return Tensor();
    });
  loss_of(ddp, 7).backward();
  auto position = [&](const std::string& event) {
    return std::find(events.begin(), events.end(), event) - events.begin();
  };
  ASSERT_EQ(std::count(events.begin(), events.end(), "all_reduce 27"), 1)
      << fmt::format("{}", events);
  ASSERT_EQ(std::count(events.begin(), events.end(), "all_reduce 40"), 1)
      << fmt::format("{}", events);
  // The last layer's bucket goes out before the first layer's gradients exist.
  EXPECT_LT(position("all_reduce 27"), position("grad 0.weight")) << fmt::format("{}", events);
  EXPECT_LT(position("all_reduce 27"), position("grad 0.bias")) << fmt::format("{}", events);
  // ... and after the first of its own (the test's hooks run after DDP's on each parameter, so
  // the bucket's last gradient is recorded just after the all-reduce it completes).
  EXPECT_GT(position("all_reduce 27"), std::min(position("grad 2.weight"), position("grad 2.bias")))
      << fmt::format("{}", events);
}

TEST(DistributedDDPBuckets, AssignmentBySizeAndDtype) {
  using distributed::detail::assign_buckets;
  auto f32 = [](int64_t n) { return zeros({n}, TensorOptions(kFloat32)); };
  auto f64 = [](int64_t n) { return zeros({n}, TensorOptions(kFloat64)); };
  // First limit 100 bytes: 40 + 40 + 40 reaches it; later ones 1000: 400 + 400 stays below.
  EXPECT_EQ(assign_buckets({f32(10), f32(10), f32(10), f32(100), f32(100)}, {100, 1000}),
            (std::vector<std::vector<size_t>>{{0, 1, 2}, {3, 4}}));
  // One tensor past the limit fills a bucket alone.
  EXPECT_EQ(assign_buckets({f32(1), f32(50), f32(1)}, {100}),
            (std::vector<std::vector<size_t>>{{0, 1}, {2}}));
  // A bucket holds one dtype; buckets are ordered by their first tensor.
  EXPECT_EQ(assign_buckets({f32(1), f64(1), f32(1)}, {1000}),
            (std::vector<std::vector<size_t>>{{0, 2}, {1}}));
}

}  // namespace
}  // namespace kiln::nn
