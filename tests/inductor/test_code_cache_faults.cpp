// Fault injection for the code cache: a read-only cache folder, a full disk (a file size limit
// makes every write past it fail, as ENOSPC would, for the cache's own writes and the compiler's),
// and a compilation killed half-way. Each fault runs in a forked child so that the limit, the
// dropped privileges or the kill stay there; the parent then checks what the child left on disk
// and that the cache still works.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "inductor/code_cache_fixture.h"

namespace kiln::inductor {
namespace {

using kiln::testing::add_source;
using kiln::testing::ScopedEnv;

// What a forked child returned and wrote to its report.
struct ChildResult {
  int status = -1;  // the exit status, or -1 if the child did not exit normally
  std::string report;
};

// Runs `body` in a forked child (in its own process group, so that a kill reaches the compiler it
// starts too). `body` returns the exit status and may fill `report`. `while_running`, if given,
// runs in the parent with the child's pid before the parent waits for it.
ChildResult run_in_child(const std::function<int(std::string& report)>& body,
                         const std::function<void(pid_t)>& while_running = {}) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::close(pipe_fds[0]);
    std::string report;
    int status = 99;
    try {
      status = body(report);
    } catch (const std::exception& e) {
      report = std::string("unexpected exception: ") + e.what();
    }
    ssize_t ignored = ::write(pipe_fds[1], report.data(), report.size());
    (void)ignored;
    ::_exit(status);
  }
  ::close(pipe_fds[1]);
  if (while_running) while_running(pid);
  std::string report;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) report.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, report};
}

// Files whose name marks them as temporary (a write or compilation in progress or abandoned).
size_t temporaries_in(const fs::path& folder) {
  size_t count = 0;
  std::error_code ignored;
  for (const auto& e : fs::directory_iterator(folder, ignored)) {
    count += e.path().filename().string().find(".tmp") != std::string::npos;
  }
  return count;
}

// 0 if `load` raised a kiln::Error naming `what`, with its message in `report`; 1 otherwise.
int expect_error_naming(const std::function<void()>& load, const std::string& what,
                        std::string& report) {
  try {
    load();
    report = "no error";
    return 1;
  } catch (const Error& e) {
    report = e.what();
    return report.find(what) != std::string::npos ? 0 : 1;
  }
}

TEST_F(CodeCache, UnwritableCacheFolderIsAClearError) {
  // Root writes into read-only folders: as root the child runs as nobody, on a folder nobody owns.
  const fs::path cache = folder_.path() / "read_only";
  fs::create_directory(cache);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(folder_.path().c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(cache.c_str(), 65534, 65534), 0);
  }
  fs::permissions(cache, fs::perms::owner_read | fs::perms::owner_exec);
  ScopedEnv env("KILN_CACHE_DIR", cache.string());
  const ChildResult child = run_in_child([&](std::string& report) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      report = "could not drop privileges";
      return 2;
    }
    try {
      load(add_source("read only"));
      report = "no error";
      return 1;
    } catch (const Error& e) {
      report = e.what();
      const bool clear = report.find(cache.string()) != std::string::npos &&
                         report.find("not writable") != std::string::npos &&
                         report.find("KILN_CACHE_DIR") != std::string::npos;
      return clear ? 0 : 1;
    }
  });
  EXPECT_EQ(child.status, 0) << child.report;
  EXPECT_TRUE(fs::is_empty(cache));
}

TEST_F(CodeCache, FullDiskIsAClearErrorLeavingNoEntryAndTheCacheWorksAfterwards) {
  const std::string source = add_source("full disk");
  const fs::path entry = entry_of(source);
  // 64 bytes: the cache's own write of source.cpp fails. 4 KiB: the source is written and the
  // compiler cannot write the module.
  for (rlim_t limit : {rlim_t{64}, rlim_t{4096}}) {
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    ASSERT_GT(source.size(), 64u);
    const ChildResult child = run_in_child([&](std::string& report) {
      ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead
      const rlimit rl{limit, limit};
      if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) return 2;
      return expect_error_naming([&] { load(source); }, "test_kernel", report);
    });
    EXPECT_EQ(child.status, 0) << child.report;
    if (limit == 64) {
      EXPECT_NE(child.report.find("could not write"), std::string::npos) << child.report;
    } else {
      EXPECT_NE(child.report.find((entry / "source.cpp").string()), std::string::npos)
          << child.report;
    }
    EXPECT_FALSE(fs::exists(entry / "ok"));
    EXPECT_FALSE(fs::exists(entry / "module.so"));
    EXPECT_EQ(temporaries_in(entry), 0u) << "a failed write leaves no temporary file";
  }
  // With space again, the same source compiles and its entry is complete.
  const size_t before = compilation_count();
  EXPECT_EQ(add_of(*load(source))(20, 22), 42);
  EXPECT_EQ(compilation_count(), before + 1);
  EXPECT_EQ(file_names(entry), (std::set<std::string>{"ok", "module.so", "source.cpp"}));
}

TEST_F(CodeCache, CompilationKilledHalfWayLeavesNoEntryAndIsRedoneNextTime) {
  // A compiler that, asked to hang, writes half a module where it was told to and waits to be
  // killed; otherwise the real compiler.
  const fs::path wrapper = folder_.path() / "hanging-cxx";
  const fs::path started = folder_.path() / "compiler-started";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\n"
        << "if [ -n \"$KILN_TEST_HANG\" ] && [ \"$1\" != --version ]; then\n"
        << "  output=; previous=\n"
        << "  for arg; do [ \"$previous\" = -o ] && output=$arg; previous=$arg; done\n"
        << "  printf 'half a module' > \"$output\"\n"
        << "  touch '" << started.string() << "'\n"
        << "  exec sleep 60\n"
        << "fi\n"
        << "exec " << config_.cxx << " \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  CompilerConfig config = config_;
  config.cxx = wrapper.string();
  const std::string source = add_source("interrupted");
  const fs::path entry = cache_entry_dir(cache_key(source, config, {}));

  const ChildResult child = run_in_child(
      [&](std::string& report) {
        ::setenv("KILN_TEST_HANG", "1", 1);
        load_or_compile(source, config, {}, "test_kernel");
        report = "the compilation finished";
        return 1;
      },
      [&](pid_t pid) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!fs::exists(started) && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        EXPECT_TRUE(fs::exists(started)) << "the compiler never started";
        ::kill(-pid, SIGKILL);  // the child and the compiler it started
      });
  EXPECT_EQ(child.status, -1) << "the child was not killed: " << child.report;

  // The half-written module is a temporary file, never the entry's module.so.
  EXPECT_FALSE(fs::exists(entry / "ok"));
  EXPECT_FALSE(fs::exists(entry / "module.so"));
  EXPECT_EQ(temporaries_in(entry), 1u);
  // The next load compiles again and publishes a complete entry (the leftover is removed once it
  // is an hour old: it could be another process's compilation in progress).
  const size_t before = compilation_count();
  EXPECT_EQ(add_of(*load_or_compile(source, config, {}, "test_kernel"))(2, 2), 4);
  EXPECT_EQ(compilation_count(), before + 1);
  EXPECT_TRUE(fs::exists(entry / "ok"));
}

}  // namespace
}  // namespace kiln::inductor
