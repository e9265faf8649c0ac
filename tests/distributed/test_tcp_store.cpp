// TCPStore in one process: a server store and client stores on threads, over loopback.
#include <gtest/gtest.h>
#include <kiln/core/error.h>
#include <kiln/distributed/tcp_store.h>

#include "distributed/error_message.h"
#include "distributed/launch_ranks.h"

#include <chrono>
#include <thread>

namespace kiln::distributed {
namespace {

using namespace std::chrono_literals;

TEST(DistributedTCPStore, SetGetAddCheckAcrossClients) {
  TCPStore server("127.0.0.1", 0, 2, /*is_server=*/true, 5s);
  ASSERT_GT(server.port(), 0);
  TCPStore client("127.0.0.1", server.port(), 2, /*is_server=*/false, 5s);
  server.set("greeting", std::string("hello"));
  EXPECT_EQ(client.get_string("greeting"), "hello");
  client.set("bytes", std::vector<uint8_t>{0, 1, 255});
  EXPECT_EQ(server.get("bytes"), (std::vector<uint8_t>{0, 1, 255}));
  EXPECT_EQ(client.add("counter", 2), 2);
  EXPECT_EQ(server.add("counter", 5), 7);
  EXPECT_EQ(client.get_string("counter"), "7");  // counters read as decimal text
  EXPECT_TRUE(client.check({"greeting", "counter"}));
  EXPECT_FALSE(client.check({"greeting", "absent"}));
}

TEST(DistributedTCPStore, GetWaitsForAnotherClientsSet) {
  TCPStore server("127.0.0.1", 0, 2, true, 5s);
  std::thread setter([port = server.port()] {
    TCPStore client("127.0.0.1", port, 2, false, 5s);
    std::this_thread::sleep_for(100ms);
    client.set("late", std::string("arrived"));
  });
  EXPECT_EQ(server.get_string("late"), "arrived");
  server.wait({"late"});
  setter.join();
}

TEST(DistributedTCPStore, GetTimesOutNamingTheKeyAndTimeout) {
  TCPStore server("127.0.0.1", 0, 1, true, 300ms);
  auto start = std::chrono::steady_clock::now();
  auto message = ::kiln::testing::error_message_of([&] { server.get("never_set"); });
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(message.find("never_set"), std::string::npos) << message;
  EXPECT_NE(message.find("300 ms"), std::string::npos) << message;
  EXPECT_LT(elapsed, 3s);
  // The connection is replaced after the timeout: the store still works.
  server.set("after", std::string("ok"));
  EXPECT_EQ(server.get_string("after"), "ok");
  message = ::kiln::testing::error_message_of([&] {
    server.wait({"after", "missing_too"}, 200ms);
  });
  EXPECT_NE(message.find("missing_too"), std::string::npos) << message;
  EXPECT_NE(message.find("200 ms"), std::string::npos) << message;
}

TEST(DistributedTCPStore, ClientWithoutServerFailsWithinTimeout) {
  int port = testing::free_port();
  TCPStore client("127.0.0.1", port, 2, false, 300ms);
  auto start = std::chrono::steady_clock::now();
  auto message = ::kiln::testing::error_message_of([&] { client.set("k", std::string("v")); });
  EXPECT_NE(message.find("cannot connect"), std::string::npos) << message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(DistributedTCPStore, RejectsBadArguments) {
  EXPECT_NE(::kiln::testing::error_message_of([] {
              TCPStore("127.0.0.1", 0, 1, false, 1s);
            }).find("port"),
            std::string::npos);
  EXPECT_NE(::kiln::testing::error_message_of([] {
              TCPStore("127.0.0.1", 0, 0, true, 1s);
            }).find("world_size"),
            std::string::npos);
  EXPECT_NE(::kiln::testing::error_message_of([] {
              TCPStore("127.0.0.1", 0, 1, true, 0ms);
            }).find("timeout"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::distributed
