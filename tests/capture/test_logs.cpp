// Log channels: parsing the comma list, "all", unknown names, where records go.
#include <gtest/gtest.h>
#include <kiln/capture/logs.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_util.h"

namespace kiln::logs {
namespace {

using kiln::testing::throws_error;

// Every test leaves the channels off and records going to stderr.
class Logs : public ::testing::Test {
 protected:
  void TearDown() override {
    set_enabled("");
    set_sink({});
  }
};

// Records (channel, message) received by a sink.
struct Recorded {
  std::vector<std::pair<Channel, std::string>> records;
  Sink sink() {
    return [this](Channel c, std::string_view m) { records.emplace_back(c, std::string(m)); };
  }
};

TEST_F(Logs, ChannelNames) {
  std::vector<std::string> names;
  for (Channel c : all_channels()) names.emplace_back(channel_name(c));
  EXPECT_EQ(names,
            (std::vector<std::string>{"graph", "graph_breaks", "recompiles", "guards", "aot_graphs",
                                      "fusion", "output_code", "dynamic", "perf_hints", "ddp",
                                      "cudagraphs", "compile_progress"}));
}

TEST_F(Logs, CommaListEnablesExactlyTheNamedChannels) {
  set_enabled(" graph_breaks ,recompiles,\tguards ,");
  EXPECT_TRUE(enabled(Channel::graph_breaks));
  EXPECT_TRUE(enabled(Channel::recompiles));
  EXPECT_TRUE(enabled(Channel::guards));
  EXPECT_FALSE(enabled(Channel::graph));
  EXPECT_FALSE(enabled(Channel::output_code));
  EXPECT_FALSE(enabled(Channel::perf_hints));
}

TEST_F(Logs, AllEnablesEveryChannel) {
  set_enabled("all");
  for (Channel c : all_channels()) EXPECT_TRUE(enabled(c)) << channel_name(c);
}

TEST_F(Logs, EmptyListTurnsEverythingOff) {
  set_enabled("all");
  set_enabled("");
  for (Channel c : all_channels()) EXPECT_FALSE(enabled(c)) << channel_name(c);
  set_enabled(" , ");
  for (Channel c : all_channels()) EXPECT_FALSE(enabled(c)) << channel_name(c);
}

TEST_F(Logs, UnknownNameRaisesListingValidOnesAndChangesNothing) {
  set_enabled("graph");
  EXPECT_TRUE(throws_error([] { set_enabled("graph_breaks,grpah"); },
                           {"unknown log channel \"grpah\"",
                            "valid channels: all, graph, graph_breaks, recompiles, guards, "
                            "aot_graphs, fusion, output_code, dynamic, perf_hints"}));
  EXPECT_TRUE(enabled(Channel::graph));
  EXPECT_FALSE(enabled(Channel::graph_breaks));
}

TEST_F(Logs, SetEnabledOverridesTheEnvironment) {
  // KILN_LOGS is read at most once per process; after set_enabled it is never read, so even an
  // invalid value does not matter.
  const char* saved = std::getenv("KILN_LOGS");
  std::string saved_value = saved ? saved : "";
  setenv("KILN_LOGS", "not_a_channel", 1);
  set_enabled("fusion");
  EXPECT_TRUE(enabled(Channel::fusion));
  EXPECT_FALSE(enabled(Channel::graph));
  if (saved) {
    setenv("KILN_LOGS", saved_value.c_str(), 1);
  } else {
    unsetenv("KILN_LOGS");
  }
}

TEST_F(Logs, SinkReceivesRecordsOfEnabledChannelsOnly) {
  Recorded recorded;
  set_sink(recorded.sink());
  set_enabled("graph_breaks");
  log(Channel::graph_breaks, "item() needs a value at train.cpp:12");
  log(Channel::recompiles, "silent: channel off");
  log(Channel::graph, "silent too");
  ASSERT_EQ(recorded.records.size(), 1u);
  EXPECT_EQ(recorded.records[0].first, Channel::graph_breaks);
  EXPECT_EQ(recorded.records[0].second, "item() needs a value at train.cpp:12");
}

TEST_F(Logs, SetSinkReturnsThePreviousOne) {
  Recorded first, second;
  Sink before = set_sink(first.sink());
  EXPECT_FALSE(static_cast<bool>(before));  // stderr
  Sink previous = set_sink(second.sink());
  ASSERT_TRUE(static_cast<bool>(previous));
  set_enabled("dynamic");
  previous(Channel::dynamic, "direct");
  log(Channel::dynamic, "through log");
  ASSERT_EQ(first.records.size(), 1u);
  EXPECT_EQ(first.records[0].second, "direct");
  ASSERT_EQ(second.records.size(), 1u);
  EXPECT_EQ(second.records[0].second, "through log");
}

TEST_F(Logs, StderrRecordFormat) {
  set_enabled("recompiles,graph");
  ::testing::internal::CaptureStderr();
  log(Channel::recompiles, "guard failed: x.size(0) == 4");
  log(Channel::graph, "graph 0 of f:\n%x : f32[4]\n\nreturn (%x,)\n");
  log(Channel::guards, "silent: channel off");
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "[kiln:recompiles] guard failed: x.size(0) == 4\n"
            "[kiln:graph] graph 0 of f:\n"
            "  %x : f32[4]\n"
            "\n"
            "  return (%x,)\n");
}

TEST_F(Logs, FormatRecord) {
  EXPECT_EQ(format_record(Channel::perf_hints, "slow"), "[kiln:perf_hints] slow\n");
  EXPECT_EQ(format_record(Channel::fusion, ""), "[kiln:fusion]\n");
  EXPECT_EQ(format_record(Channel::fusion, "a\nb"), "[kiln:fusion] a\n  b\n");
}

TEST_F(Logs, ALogFromInsideTheSinkGoesToStderr) {
  set_enabled("guards,dynamic");
  Recorded recorded;
  set_sink([&recorded](Channel c, std::string_view m) {
    recorded.records.emplace_back(c, std::string(m));
    if (c == Channel::guards) log(Channel::dynamic, "nested");
  });
  ::testing::internal::CaptureStderr();
  log(Channel::guards, "outer");
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(recorded.records.size(), 1u);
  EXPECT_EQ(recorded.records[0].second, "outer");
  EXPECT_EQ(err, "[kiln:dynamic] nested\n");
}

TEST_F(Logs, RecordsFromManyThreadsAllArrive) {
  set_enabled("aot_graphs");
  Recorded recorded;  // not thread-safe itself: the sink is called under the log mutex
  set_sink(recorded.sink());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 100; ++i) log(Channel::aot_graphs, "record");
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(recorded.records.size(), 400u);
}

}  // namespace
}  // namespace kiln::logs
