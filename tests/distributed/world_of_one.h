#pragma once
// A process group of one rank (rank 0 of 1, rendezvous on a free loopback port) for the test's
// lifetime: DDP runs its whole protocol without a second process.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <chrono>

namespace kiln::testing {

class WorldOfOne : public ::testing::Test {
 protected:
  void SetUp() override {
    distributed::InitOptions options;
    options.rank = 0;
    options.world_size = 1;
    options.master_addr = "127.0.0.1";
    options.master_port = 0;
    options.timeout = std::chrono::seconds(5);
    distributed::init_process_group(options);
  }
  void TearDown() override { distributed::destroy_process_group(); }
};

}  // namespace kiln::testing
