// kiln run's launcher. The ranks are started with posix_spawn (safe in a process whose threads
// already run, such as a test binary). The launcher waits with SIGINT, SIGTERM and SIGCHLD
// blocked on its thread and takes them with sigtimedwait. Threads it did not start (OpenBLAS
// creates its pool when the library loads) do not block them, and the kernel may hand a
// process-wide SIGINT to one of those: a handler that only records the signal catches that case,
// where the default action would end the launcher and leave the ranks running.
#include <kiln/distributed/launcher.h>

#include <kiln/core/error.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>

extern char** environ;

namespace kiln::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// A SIGINT/SIGTERM that reached another thread of this process. Signal handlers can only talk
// through static lock-free state; this is the one such variable, used by one launch at a time.
std::atomic<int> signal_on_another_thread{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void record_signal(int sig) { signal_on_another_thread.store(sig); }

// Blocks the signals the launcher waits for on this thread, and records them on any other, while
// it lives.
class WaitedSignals {
 public:
  WaitedSignals() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_mask_);
    signal_on_another_thread.store(0);
    struct sigaction recorder {};
    recorder.sa_handler = record_signal;
    sigemptyset(&recorder.sa_mask);
    recorder.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &recorder, &previous_int_);
    ::sigaction(SIGTERM, &recorder, &previous_term_);
  }
  ~WaitedSignals() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    // A SIGCHLD left pending would be delivered (and ignored) anyway; SIGINT/SIGTERM were taken.
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  }
  WaitedSignals(const WaitedSignals&) = delete;
  WaitedSignals& operator=(const WaitedSignals&) = delete;

  // One of the signals, or 0 when none came within `timeout`.
  int wait(std::chrono::milliseconds timeout) const {
    timespec ts{static_cast<time_t>(timeout.count() / 1000),
                static_cast<long>(timeout.count() % 1000) * 1000000L};
    const int s = sigtimedwait(&set_, nullptr, &ts);
    if (s == SIGINT || s == SIGTERM) return s;
    const int elsewhere = signal_on_another_thread.exchange(0);
    if (elsewhere != 0) return elsewhere;
    return s > 0 ? s : 0;
  }

 private:
  sigset_t set_;
  sigset_t previous_mask_;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// posix_spawn's attributes for a rank: no blocked signals and default handlers, whatever the
// launcher's thread has.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &defaults);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

// A TCP port on `address` that nobody listens on right now (torchrun's standalone mode does the
// same; another process could take it before rank 0 binds it, which is rare on one machine).
int free_port(const std::string& address) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  KILN_CHECK(fd >= 0, "kiln run: socket() failed looking for a free port: {}",
             std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0;
  const int error = errno;
  ::close(fd);
  KILN_CHECK(ok, "kiln run: could not find a free port on {}: {}", address, std::strerror(error));
  return ntohs(addr.sin_port);
}

std::vector<std::string> rank_environment(const LaunchOptions& options, int rank, int port) {
  std::map<std::string, std::string> overrides = {
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(options.nproc_per_node)},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc_per_node)},
      {"GROUP_RANK", "0"},
      {"MASTER_ADDR", options.master_addr},
      {"MASTER_PORT", std::to_string(port)},
  };
  // As torchrun: several ranks on one machine would oversubscribe its cores with a thread pool
  // each, so OMP_NUM_THREADS defaults to 1 unless the user set it.
  if (options.nproc_per_node > 1 && std::getenv("OMP_NUM_THREADS") == nullptr)
    overrides["OMP_NUM_THREADS"] = "1";
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (!overrides.contains(entry.substr(0, entry.find('=')))) env.push_back(std::move(entry));
  }
  for (const auto& [key, value] : overrides) env.push_back(key + "=" + value);
  return env;
}

pid_t spawn_rank(const LaunchOptions& options, int rank, int port,
                 const SpawnAttributes& attributes) {
  std::vector<std::string> env = rank_environment(options, rank, port);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.command;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc =
      ::posix_spawnp(&pid, args[0].c_str(), nullptr, attributes.get(), argv.data(), envp.data());
  KILN_CHECK(rc == 0, "kiln run: could not start rank {} ({}): {}", rank, args[0],
             std::strerror(rc));
  return pid;
}

std::string describe(const RankExit& exit) {
  if (exit.signal != 0)
    return fmt::format("was killed by signal {} ({})", exit.signal, ::strsignal(exit.signal));
  return fmt::format("exited with code {}", exit.exit_code);
}

// The job's ranks while they run.
class Ranks {
 public:
  Ranks(const LaunchOptions& options, int port) {
    SpawnAttributes attributes;
    for (int rank = 0; rank < options.nproc_per_node; ++rank) {
      try {
        pids_.push_back(spawn_rank(options, rank, port, attributes));
      } catch (const Error&) {
        signal_running(SIGKILL);
        reap(/*block=*/true);
        throw;
      }
      exits_.push_back({rank, 0, 0, false});
      done_.push_back(false);
    }
  }

  bool any_running() const {
    for (bool d : done_)
      if (!d) return true;
    return false;
  }

  // Collects the ranks that ended; returns those that failed (in rank order).
  std::vector<int> reap(bool block = false) {
    std::vector<int> failed;
    for (size_t r = 0; r < pids_.size(); ++r) {
      if (done_[r]) continue;
      int status = 0;
      if (::waitpid(pids_[r], &status, block ? 0 : WNOHANG) != pids_[r]) continue;
      done_[r] = true;
      if (WIFSIGNALED(status)) exits_[r].signal = WTERMSIG(status);
      if (WIFEXITED(status)) exits_[r].exit_code = WEXITSTATUS(status);
      if (exits_[r].signal != 0 || exits_[r].exit_code != 0) failed.push_back(static_cast<int>(r));
    }
    return failed;
  }

  // Sends sig to every rank still running (only this launcher's children, by pid).
  void signal_running(int sig, bool mark_stopped = false) {
    for (size_t r = 0; r < pids_.size(); ++r) {
      if (done_[r]) continue;
      ::kill(pids_[r], sig);
      if (mark_stopped) exits_[r].stopped = true;
    }
  }

  pid_t pid(int rank) const { return pids_[static_cast<size_t>(rank)]; }
  const std::vector<RankExit>& exits() const { return exits_; }

 private:
  std::vector<pid_t> pids_;
  std::vector<RankExit> exits_;
  std::vector<bool> done_;
};

}  // namespace

LaunchResult launch(const LaunchOptions& options, std::ostream& log) {
  KILN_CHECK(options.nproc_per_node > 0, "kiln run: --nproc-per-node must be positive, got {}",
             options.nproc_per_node);
  KILN_CHECK(!options.command.empty(), "kiln run: expected a program to run");
  KILN_CHECK(options.master_port >= 0 && options.master_port < 65536,
             "kiln run: --master-port must be in [0, 65535], got {}", options.master_port);
  LaunchResult result;
  result.master_port =
      options.master_port != 0 ? options.master_port : free_port(options.master_addr);

  WaitedSignals signals;  // before spawning: a rank that ends at once must not be missed
  Ranks ranks(options, result.master_port);
  const auto job_deadline =
      options.timeout ? Clock::now() + *options.timeout : Clock::time_point::max();
  std::optional<Clock::time_point> kill_at;  // set once the launcher stops the job
  bool killed = false;
  int received = 0;  // a SIGINT/SIGTERM the launcher got

  auto stop_job = [&] {
    ranks.signal_running(SIGTERM, /*mark_stopped=*/true);
    kill_at = Clock::now() + options.grace_period;
  };
  while (ranks.any_running()) {
    const int sig = signals.wait(std::chrono::milliseconds(50));
    if ((sig == SIGINT || sig == SIGTERM) && received == 0) {
      received = sig;
      log << "kiln run: received signal " << sig << " (" << ::strsignal(sig)
          << "); passing it on to the ranks\n";
      ranks.signal_running(sig, /*mark_stopped=*/true);
      kill_at = Clock::now() + options.grace_period;
    }
    for (int rank : ranks.reap()) {
      if (kill_at || result.failed_rank) continue;  // ended by the launcher, or after a failure
      result.failed_rank = rank;
      log << "kiln run: rank " << rank << " (pid " << ranks.pid(rank) << ") "
          << describe(ranks.exits()[static_cast<size_t>(rank)]) << "; stopping the other ranks\n";
      stop_job();
    }
    if (!kill_at && Clock::now() > job_deadline) {
      log << "kiln run: the job ran past its timeout of " << options.timeout->count()
          << " ms; stopping the ranks\n";
      stop_job();
    }
    if (kill_at && !killed && Clock::now() > *kill_at) {
      ranks.signal_running(SIGKILL);
      killed = true;
    }
  }
  result.ranks = ranks.exits();
  if (received != 0) {
    result.exit_code = 128 + received;
  } else if (kill_at) {
    result.exit_code = 1;
  } else {
    for (const RankExit& exit : result.ranks)
      if (exit.signal != 0 || exit.exit_code != 0) result.exit_code = 1;
  }
  if (result.exit_code != 0) {
    for (const RankExit& exit : result.ranks)
      log << "kiln run: rank " << exit.rank << " " << describe(exit)
          << (exit.stopped ? " (stopped by the launcher)" : "")
          << (result.failed_rank == exit.rank ? " (the first to fail)" : "") << "\n";
  }
  return result;
}

}  // namespace kiln::distributed
