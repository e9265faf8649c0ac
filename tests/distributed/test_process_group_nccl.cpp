// The nccl backend in this process: a world of one rank on cuda:0 (a real NCCL communicator; the
// multi-rank tests, one GPU per rank, are in test_multiprocess.cpp and test_ddp.cpp). With one
// rank every collective's result is its input (Avg divides by 1), so random inputs must come
// back exactly: a wrong NCCL type, count, pointer or stream order shows. Without a GPU these
// tests are skipped; DistributedInit.NcclWithoutAGpuSaysWhy runs everywhere.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include "distributed/error_message.h"

#include <chrono>
#include <string>
#include <vector>

namespace kiln::distributed {
namespace {

constexpr Device kGpu = Device::cuda(0);

InitOptions nccl_world_of_one() {
  InitOptions options;
  options.backend = "nccl";
  options.rank = 0;
  options.world_size = 1;
  options.master_addr = "127.0.0.1";
  options.master_port = 0;
  options.timeout = std::chrono::seconds(20);
  options.device_id = 0;
  return options;
}

class CudaDistributedNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    init_process_group(nccl_world_of_one());
  }
  void TearDown() override { destroy_process_group(); }
};

std::vector<double> host_values(const Tensor& t) { return t.to(kCPU).tolist<double>(); }

// A random tensor of `dtype` on the GPU, and its values on the host.
Tensor random_on_gpu(IntList sizes, DType dtype) {
  Tensor t = randn(sizes).mul(8);
  if (!is_floating_point(dtype)) t = t.round();
  return t.to(dtype).to(kGpu);
}

TEST(DistributedInit, NcclWithoutAGpuSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a GPU (CudaDistributedNccl.*)";
  InitOptions options = nccl_world_of_one();
  try {
    init_process_group(options);
    FAIL() << "init_process_group('nccl') succeeded without a GPU";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("nccl backend"), std::string::npos) << message;
    EXPECT_TRUE(message.find("no CUDA device is visible") != std::string::npos ||
                message.find("has no CUDA") != std::string::npos ||
                message.find("found no NCCL") != std::string::npos)
        << message;
  }
  EXPECT_FALSE(is_initialized());
}

TEST_F(CudaDistributedNccl, GroupDrivesTheChosenDevice) {
  EXPECT_EQ(get_backend(), "nccl");
  auto group = std::dynamic_pointer_cast<ProcessGroupNccl>(default_process_group());
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->device(), 0);
  EXPECT_EQ(group->timeout(), std::chrono::milliseconds(20000));
}

TEST_F(CudaDistributedNccl, EveryReductionOfEveryDtypeComesBackExactly) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt8, kUInt8}) {
    for (ReduceOp op :
         {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Product, ReduceOp::Max, ReduceOp::Min}) {
      if (op == ReduceOp::Avg && !is_floating_point(dtype)) continue;
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::string(reduce_op_name(op)));
      Tensor t = dtype == kUInt8 ? random_on_gpu({5, 7}, kFloat32).abs().to(kUInt8)
                                 : random_on_gpu({5, 7}, dtype);
      const std::vector<double> before = host_values(t);
      all_reduce(t, op);
      EXPECT_EQ(host_values(t), before);
    }
  }
  Tensor flags = tensor({1.0, 0.0, 1.0}).to(kBool).to(kGpu);
  all_reduce(flags, ReduceOp::Sum);  // a logical or of one rank
  EXPECT_EQ(host_values(flags), (std::vector<double>{1, 0, 1}));
}

TEST_F(CudaDistributedNccl, BroadcastGatherAndScatterMoveTheRightBytes) {
  Tensor t = random_on_gpu({3, 4}, kFloat32);
  const std::vector<double> values = host_values(t);
  broadcast(t, 0);
  EXPECT_EQ(host_values(t), values);

  std::vector<Tensor> outputs = {zeros({3, 4}, TensorOptions(kFloat32).device(kGpu))};
  all_gather(outputs, t);
  EXPECT_EQ(host_values(outputs[0]), values);
  Tensor flat = zeros({12}, TensorOptions(kFloat32).device(kGpu));
  all_gather_into_tensor(flat, t);
  EXPECT_EQ(host_values(flat), values);

  Tensor out = zeros({3, 4}, TensorOptions(kFloat32).device(kGpu));
  reduce_scatter(out, {t});
  EXPECT_EQ(host_values(out), values);
  Tensor slice = zeros({12}, TensorOptions(kFloat32).device(kGpu));
  reduce_scatter_tensor(slice, t.reshape({-1}), ReduceOp::Avg);
  EXPECT_EQ(host_values(slice), values);
  barrier();
  barrier(/*async_op=*/true).wait();
}

// Asynchronous collectives run on the group's stream after what the caller's stream queued:
// the input written by a kernel just before must be what is reduced, and a kernel queued after
// block_current_stream() must see the result.
TEST_F(CudaDistributedNccl, CollectivesFollowAndPrecedeTheCallersStream) {
  Tensor t = zeros({1 << 20}, TensorOptions(kFloat32).device(kGpu));
  std::vector<Work> works;
  for (int k = 1; k <= 4; ++k) {
    t.add_(1.0);  // queued on the current stream before the collective
    works.push_back(all_reduce(t, ReduceOp::Avg, /*async_op=*/true));
    works.back().block_current_stream();
  }
  t.mul_(3.0);
  EXPECT_EQ(host_values(t.narrow(0, 0, 3)), (std::vector<double>{12, 12, 12}));
  for (const Work& w : works) {
    w.wait();
    EXPECT_TRUE(w.is_completed());
    EXPECT_TRUE(w.is_success());
  }
  EXPECT_NE(works[0].description().find("all_reduce (Avg) of 1048576 float32 elements"),
            std::string::npos)
      << works[0].description();
}

TEST_F(CudaDistributedNccl, BadTensorsAreClearErrors) {
  Tensor cpu = ones({3});
  EXPECT_ERROR_MENTIONS(all_reduce(cpu),
                        "all_reduce: tensor is on cpu; this rank's nccl group drives cuda:0");
  Tensor shorts = ones({3}, kInt16).to(kGpu);
  EXPECT_THROW(all_reduce(shorts), TypeError);
  EXPECT_ERROR_MENTIONS(all_reduce(shorts), "dtype int16, which NCCL cannot reduce");
  Tensor strided = ones({4, 4}).to(kGpu).t();
  EXPECT_ERROR_MENTIONS(broadcast(strided, 0), "must be contiguous");
  Tensor counts = ones({3}, kInt64).to(kGpu);
  EXPECT_THROW(all_reduce(counts, ReduceOp::Avg), TypeError);
  std::vector<Tensor> two = {ones({3}).to(kGpu), ones({3}).to(kGpu)};
  EXPECT_ERROR_MENTIONS(all_gather(two, ones({3}).to(kGpu)),
                        "expected one output tensor per rank (1), got 2");
  Tensor flat = zeros({5}).to(kGpu);
  EXPECT_ERROR_MENTIONS(all_gather_into_tensor(flat, ones({3}).to(kGpu)),
                        "output[0] has 5 elements");
  Tensor t = ones({3}).to(kGpu);
  EXPECT_ERROR_MENTIONS(broadcast(t, 1), "src must be a rank in [0, 1), got 1");
  // The group still works after refusing them.
  all_reduce(t);
  EXPECT_EQ(host_values(t), (std::vector<double>{1, 1, 1}));
}

std::shared_ptr<nn::Sequential> gpu_mlp(uint64_t seed) {
  manual_seed(seed);
  auto mlp = std::make_shared<nn::Sequential>(
      std::make_shared<nn::Linear>(16, 32), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(32, 32), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(32, 4));
  mlp->to(kGpu);
  return mlp;
}

double max_abs_difference(nn::Module& a, nn::Module& b) {
  double worst = 0;
  auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    worst = std::max(worst, (pa[i] - pb[i]).abs().max().item<double>());
  return worst;
}

// Three SGD steps of DDP (buckets on the GPU, tiny ones so that there are several, reduced on
// the group's stream) against the same model trained without DDP: one rank's average is its
// own gradient, so the parameters must be equal to the bit. Compiled DDP (the graph cut at the
// buckets, each piece compiled for the GPU) against the plain model within float32 rounding.
TEST_F(CudaDistributedNccl, DdpOnTheGpuTrainsAsTheModelAlone) {
  for (const bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    auto replica = gpu_mlp(7), plain = gpu_mlp(7);
    nn::DistributedDataParallelOptions options;
    options.bucket_cap_mb = 600.0 / (1024 * 1024);
    auto ddp = std::make_shared<nn::DistributedDataParallel>(replica, options);
    EXPECT_GE(ddp->bucket_parameter_names().size(), 3u);
    if (compiled) ddp = kiln::compile(ddp);
    optim::SGD sgd(ddp->parameters(), {.lr = 0.1, .momentum = 0.9});
    optim::SGD plain_sgd(plain->parameters(), {.lr = 0.1, .momentum = 0.9});
    manual_seed(3);
    Tensor x = randn({8, 16}).to(kGpu), y = randn({8, 4}).to(kGpu);
    for (int step = 0; step < 3; ++step) {
      sgd.zero_grad();
      mse_loss((*ddp)(x), y).backward();
      sgd.step();
      plain_sgd.zero_grad();
      mse_loss((*plain)(x), y).backward();
      plain_sgd.step();
    }
    const double difference = max_abs_difference(*replica, *plain);
    if (compiled) {
      EXPECT_LE(difference, 1e-5);
    } else {
      EXPECT_EQ(difference, 0);
    }
  }
}

TEST_F(CudaDistributedNccl, DdpRefusesAReplicaOnTwoDevices) {
  auto on_gpu = std::make_shared<nn::Linear>(4, 4);
  on_gpu->to(kGpu);
  auto mixed = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 4), on_gpu);
  EXPECT_ERROR_MENTIONS((void)std::make_shared<nn::DistributedDataParallel>(mixed),
                        "parameters and buffers must be on one device");
}

TEST(CudaDistributedGloo, GpuTensorsNeedTheNcclBackend) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  InitOptions options = nccl_world_of_one();
  options.backend = "gloo";
  init_process_group(options);
  Tensor t = ones({3}).to(kGpu);
  EXPECT_ERROR_MENTIONS(all_reduce(t), "the gloo backend takes CPU tensors");
  destroy_process_group();
}

}  // namespace
}  // namespace kiln::distributed
