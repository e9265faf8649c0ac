// ProcessGroupGloo used directly (no default group): two ranks as two threads of this process,
// meeting through one TCPStore.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <thread>

namespace kiln::distributed {
namespace {

using namespace std::chrono_literals;

TEST(DistributedProcessGroupGloo, TwoRanksAsThreads) {
  auto server = std::make_shared<TCPStore>("127.0.0.1", 0, 2, /*is_server=*/true, 5s);
  auto client = std::make_shared<TCPStore>("127.0.0.1", server->port(), 2, false, 5s);
  ProcessGroupGlooOptions options;
  options.timeout = 5s;
  options.hostname = "127.0.0.1";
  std::vector<std::vector<double>> sums(2), gathered(2);
  auto run = [&](int rank, std::shared_ptr<Store> store) {
    ProcessGroupGloo group(store, rank, 2, options);
    EXPECT_EQ(group.rank(), rank);
    EXPECT_EQ(group.world_size(), 2);
    EXPECT_EQ(group.backend_name(), "gloo");
    Tensor t = full({2}, 10.0 * (rank + 1), TensorOptions(kFloat64));
    group.all_reduce(t, ReduceOp::Sum, /*async_op=*/true).wait();
    sums[rank] = t.tolist<double>();
    Tensor out = zeros({4}, TensorOptions(kInt32));
    Tensor in = full({2}, rank, TensorOptions(kInt32));
    group.all_gather_into_tensor(out, in);
    gathered[rank] = out.tolist<double>();
    group.barrier();
  };
  std::thread other([&] { run(1, client); });
  run(0, server);
  other.join();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(sums[rank], (std::vector<double>{30, 30}));
    EXPECT_EQ(gathered[rank], (std::vector<double>{0, 0, 1, 1}));
  }
}

}  // namespace
}  // namespace kiln::distributed
