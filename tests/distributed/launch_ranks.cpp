#include "distributed/launch_ranks.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace kiln::testing {

const std::vector<double>& RankResult::at(const std::string& name) const {
  static const std::vector<double> missing;
  auto it = values.find(name);
  return it == values.end() ? missing : it->second;
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

namespace {

std::vector<std::string> rank_environment(int rank, int world_size, int port) {
  const std::map<std::string, std::string> overrides = {
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(world_size)},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", std::to_string(port)},
      {"OMP_NUM_THREADS", "1"},  // the ranks share the machine's few cores
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (!overrides.contains(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [key, value] : overrides) env.push_back(key + "=" + value);
  return env;
}

RankResult read_results(const std::filesystem::path& path) {
  RankResult result;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name == "error") {
      result.errors.push_back(line.substr(6));
      continue;
    }
    double v;
    auto& values = result.values[name];
    while (fields >> v) values.push_back(v);
  }
  return result;
}

}  // namespace

RankResult read_rank_results(const std::string& dir, int rank) {
  return read_results(std::filesystem::path(dir) / ("rank" + std::to_string(rank) + ".txt"));
}

std::vector<RankResult> launch_ranks(const std::string& scenario, int world_size,
                                     std::vector<int> ranks, std::chrono::seconds limit) {
  if (ranks.empty())
    for (int r = 0; r < world_size; ++r) ranks.push_back(r);
  char pattern[] = "/tmp/kiln-dist-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  EXPECT_NE(dir, nullptr) << "mkdtemp: " << std::strerror(errno);
  if (dir == nullptr) return {};
  int port = free_port();

  std::vector<pid_t> pids;
  for (int rank : ranks) {
    std::vector<std::string> env = rank_environment(rank, world_size, port);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    // The build's worker, or $KILN_DIST_WORKER where the tests run from a bundle elsewhere
    // (bench/device/run_cuda_tests.sh).
    const char* moved = std::getenv("KILN_DIST_WORKER");
    std::string program = moved != nullptr ? moved : KILN_DIST_WORKER;
    std::string scenario_arg = scenario, dir_arg = dir;
    char* argv[] = {program.data(), scenario_arg.data(), dir_arg.data(), nullptr};
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, envp.data());
    EXPECT_EQ(rc, 0) << "posix_spawn " << program << ": " << std::strerror(rc);
    pids.push_back(rc == 0 ? pid : -1);
  }

  std::vector<RankResult> results(ranks.size());
  std::vector<bool> done(ranks.size(), false);
  auto deadline = std::chrono::steady_clock::now() + limit;
  size_t remaining = ranks.size();
  for (size_t i = 0; i < pids.size(); ++i)
    if (pids[i] < 0) done[i] = true, --remaining;
  while (remaining > 0) {
    bool late = std::chrono::steady_clock::now() > deadline;
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      if (late) ::kill(pids[i], SIGKILL);  // only the children this call started
      int status = 0;
      if (::waitpid(pids[i], &status, late ? 0 : WNOHANG) == pids[i]) {
        done[i] = true;
        --remaining;
        results[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    if (remaining > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    int exit_code = results[i].exit_code;
    results[i] = read_rank_results(dir, ranks[i]);
    results[i].exit_code = exit_code;
  }
  std::filesystem::remove_all(dir);
  return results;
}

}  // namespace kiln::testing
