// The launcher behind `kiln run`: ranks started with the environment torchrun sets, a failing
// rank stopping the others, and signals passed on. The ranks are small shell scripts (and
// kiln_dist_worker for a real process group); the kiln executable itself is run once at the end.
#include <gtest/gtest.h>
#include <kiln/core/error.h>
#include <kiln/distributed/launcher.h>

#include "distributed/launch_ranks.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace kiln::distributed {
namespace {

using namespace std::chrono_literals;

// A directory removed when the test ends.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kiln-launcher-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
};

LaunchOptions shell(int nproc, const std::string& script) {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.command = {"/bin/sh", "-c", script};
  options.grace_period = 2s;
  return options;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(DistributedLauncher, RanksGetTheTorchrunEnvironment) {
  TempDir dir;
  std::ostringstream log;
  LaunchResult result = launch(
      shell(3, "echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT > " +
                   dir.path() + "/env$RANK"),
      log);
  EXPECT_EQ(result.exit_code, 0) << log.str();
  EXPECT_EQ(log.str(), "");
  EXPECT_FALSE(result.failed_rank.has_value());
  ASSERT_EQ(result.ranks.size(), 3u);
  EXPECT_GT(result.master_port, 0);
  const std::string port = std::to_string(result.master_port);
  for (int rank = 0; rank < 3; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(dir.read("env" + r), r + " " + r + " 3 3 127.0.0.1 " + port + "\n");
    EXPECT_EQ(result.ranks[rank].exit_code, 0);
  }
}

TEST(DistributedLauncher, GivenPortIsPassedOn) {
  TempDir dir;
  std::ostringstream log;
  LaunchOptions options = shell(1, "echo $MASTER_PORT > " + dir.path() + "/port");
  options.master_port = 29123;
  EXPECT_EQ(launch(options, log).exit_code, 0) << log.str();
  EXPECT_EQ(dir.read("port"), "29123\n");
}

TEST(DistributedLauncher, FailingRankStopsTheOthers) {
  TempDir dir;
  std::ostringstream log;
  // Rank 1 exits with 3 once the others are up; they would sleep for a minute.
  const std::string script = "echo $$ > " + dir.path() + "/pid$RANK; " +
                             "if [ $RANK = 1 ]; then sleep 0.3; exit 3; fi; exec sleep 60";
  auto start = std::chrono::steady_clock::now();
  LaunchResult result = launch(shell(3, script), log);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(result.exit_code, 0);
  ASSERT_TRUE(result.failed_rank.has_value());
  EXPECT_EQ(*result.failed_rank, 1);
  EXPECT_NE(log.str().find("rank 1 (pid"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("exited with code 3; stopping the other ranks"), std::string::npos)
      << log.str();
  ASSERT_EQ(result.ranks.size(), 3u);
  EXPECT_EQ(result.ranks[1].exit_code, 3);
  for (int rank : {0, 2}) {
    EXPECT_EQ(result.ranks[rank].signal, SIGTERM) << "rank " << rank;
    EXPECT_TRUE(result.ranks[rank].stopped) << "rank " << rank;
    const pid_t pid = std::stoi(dir.read("pid" + std::to_string(rank)));
    EXPECT_FALSE(process_exists(pid)) << "rank " << rank << " still runs";
  }
  EXPECT_LT(elapsed, 10s);
}

TEST(DistributedLauncher, RankIgnoringSigtermIsKilledAfterTheGracePeriod) {
  TempDir dir;
  std::ostringstream log;
  // Rank 0 fails once rank 1 ignores SIGTERM; short sleeps, so nothing outlives rank 1's SIGKILL.
  const std::string trapped = dir.path() + "/trapped";
  LaunchOptions options = shell(2, "if [ $RANK = 0 ]; then while [ ! -e " + trapped +
                                       " ]; do sleep 0.05; done; exit 5; fi; trap '' TERM; touch " +
                                       trapped + "; while :; do sleep 0.1; done");
  options.grace_period = 300ms;
  LaunchResult result = launch(options, log);
  EXPECT_EQ(result.exit_code, 1);
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_EQ(result.ranks[0].exit_code, 5);
  EXPECT_EQ(result.ranks[1].signal, SIGKILL);
}

TEST(DistributedLauncher, JobTimeoutStopsTheRanks) {
  std::ostringstream log;
  LaunchOptions options = shell(2, "exec sleep 60");
  options.timeout = 300ms;
  LaunchResult result = launch(options, log);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(log.str().find("ran past its timeout of 300 ms"), std::string::npos) << log.str();
  for (const RankExit& exit : result.ranks) EXPECT_EQ(exit.signal, SIGTERM);
}

TEST(DistributedLauncher, BadOptionsAreErrors) {
  std::ostringstream log;
  LaunchOptions options = shell(0, "true");
  EXPECT_THROW(launch(options, log), Error);
  options = shell(1, "true");
  options.command.clear();
  EXPECT_THROW(launch(options, log), Error);
  options = shell(1, "true");
  options.command = {"/nonexistent/kiln-program"};
  try {
    launch(options, log);
    FAIL() << "a missing program did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not start rank 0 (/nonexistent/kiln-program)"),
              std::string::npos)
        << e.what();
  }
}

// A real process group through the launcher: kiln_dist_worker reads everything from the
// environment it was given.
TEST(DistributedLauncher, WorkerFormsAProcessGroup) {
  TempDir dir;
  std::ostringstream log;
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.command = {KILN_DIST_WORKER, "launched", dir.path()};
  ASSERT_EQ(launch(options, log).exit_code, 0) << log.str();
  for (int rank = 0; rank < 2; ++rank) {
    kiln::testing::RankResult r = kiln::testing::read_rank_results(dir.path(), rank);
    EXPECT_TRUE(r.errors.empty()) << r.errors.front();
    EXPECT_EQ(r.at("env_RANK"), std::vector<double>{double(rank)});
    EXPECT_EQ(r.at("env_LOCAL_RANK"), std::vector<double>{double(rank)});
    EXPECT_EQ(r.at("env_WORLD_SIZE"), std::vector<double>{2});
    EXPECT_EQ(r.at("env_LOCAL_WORLD_SIZE"), std::vector<double>{2});
    EXPECT_EQ(r.at("all_reduce_sum"), (std::vector<double>{3, 3}));  // 1 + 2
    EXPECT_EQ(r.at("done"), std::vector<double>{1});
  }
}

// Runs `kiln run ...` with stderr to a file; returns the pid.
pid_t spawn_cli(const std::vector<std::string>& args, const std::string& stderr_path) {
  std::vector<std::string> storage = {KILN_CLI};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, KILN_CLI, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DistributedLauncher, CommandLine) {
  TempDir dir;
  const std::string err = dir.path() + "/stderr";
  pid_t ok = spawn_cli({"run", "--nproc-per-node", "2", "/bin/sh", "-c",
                        "echo $WORLD_SIZE > " + dir.path() + "/world$RANK"},
                       err);
  EXPECT_EQ(wait_exit_code(ok), 0) << dir.read("stderr");
  EXPECT_EQ(dir.read("world0"), "2\n");
  EXPECT_EQ(dir.read("world1"), "2\n");

  // `--` ends kiln's options; the program's own `--` is left alone.
  pid_t dashes = spawn_cli({"run", "--nproc-per-node=1", "--", "/bin/sh", "-c",
                            "echo \"$@\" > " + dir.path() + "/args", "sh", "--", "-x"},
                           err);
  EXPECT_EQ(wait_exit_code(dashes), 0) << dir.read("stderr");
  EXPECT_EQ(dir.read("args"), "-- -x\n");

  pid_t failing = spawn_cli({"run", "--nproc-per-node", "2", "--master-port", "0", "/bin/sh", "-c",
                             "if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60"},
                            err);
  EXPECT_EQ(wait_exit_code(failing), 1);
  EXPECT_NE(dir.read("stderr").find("exited with code 3"), std::string::npos) << dir.read("stderr");

  pid_t usage = spawn_cli({"run", "--nproc-per-node", "2"}, err);
  EXPECT_EQ(wait_exit_code(usage), 2);
}

// Starts `kiln run` with two ranks that sleep, signals it with `send` once both are up, and checks
// that the launcher passed SIGINT on and exited with 128 + SIGINT, leaving no rank behind.
void expect_sigint_passed_on(const std::function<void(pid_t launcher)>& send) {
  TempDir dir;
  const std::string err = dir.path() + "/stderr";
  pid_t launcher = spawn_cli({"run", "--nproc-per-node", "2", "/bin/sh", "-c",
                              "echo $$ > " + dir.path() + "/pid$RANK.tmp; mv " + dir.path() +
                                  "/pid$RANK.tmp " + dir.path() + "/pid$RANK; exec sleep 60"},
                             err);
  // Once both ranks are up.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!(std::filesystem::exists(dir.path() + "/pid0") &&
           std::filesystem::exists(dir.path() + "/pid1")) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  send(launcher);
  EXPECT_EQ(wait_exit_code(launcher), 128 + SIGINT);
  EXPECT_NE(dir.read("stderr").find("received signal 2"), std::string::npos) << dir.read("stderr");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string pid = dir.read("pid" + std::to_string(rank));
    ASSERT_FALSE(pid.empty());
    if (process_exists(std::stoi(pid))) {
      ADD_FAILURE() << "rank " << rank << " still runs";
      ::kill(std::stoi(pid), SIGKILL);
    }
  }
}

// The threads of a process other than its main thread.
std::vector<pid_t> other_threads(pid_t pid) {
  std::vector<pid_t> threads;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    const pid_t tid = std::stoi(entry.path().filename().string());
    if (tid != pid) threads.push_back(tid);
  }
  return threads;
}

TEST(DistributedLauncher, SigintIsPassedOnToTheRanks) {
  expect_sigint_passed_on([](pid_t launcher) { ::kill(launcher, SIGINT); });
}

// The kernel may hand a process-wide SIGINT to any thread that does not block it, such as the
// pool OpenBLAS starts when the library loads; sending it to such a thread directly makes that
// case certain instead of occasional.
TEST(DistributedLauncher, ASigintTakenByAnotherThreadIsPassedOnToo) {
  bool sent_to_another_thread = false;
  expect_sigint_passed_on([&](pid_t launcher) {
    const std::vector<pid_t> threads = other_threads(launcher);
    if (threads.empty()) {
      ::kill(launcher, SIGINT);
      return;
    }
    sent_to_another_thread = true;
    ::syscall(SYS_tgkill, launcher, threads.front(), SIGINT);
  });
  if (!sent_to_another_thread)
    GTEST_SKIP() << "the launcher had no thread besides its main one (no OpenBLAS pool)";
}

}  // namespace
}  // namespace kiln::distributed
