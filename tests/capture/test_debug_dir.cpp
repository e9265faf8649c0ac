// KILN_COMPILE_DEBUG folders: layout, unique names, no overwrite, atomic writes, errors.
#include <gtest/gtest.h>
#include <kiln/capture/debug_dir.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "test_util.h"

namespace kiln::debug {
namespace {

namespace fs = std::filesystem;
using kiln::testing::throws_error;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> entries(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.insert(e.path().filename().string());
  return names;
}

// Restores an environment variable on destruction.
class EnvVar {
 public:
  explicit EnvVar(const char* name) : name_(name) {
    const char* v = std::getenv(name);
    if (v) saved_ = v;
  }
  ~EnvVar() {
    if (saved_) {
      setenv(name_, saved_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  void set(const std::string& value) { setenv(name_, value.c_str(), 1); }
  void unset() { unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

// Compile debugging on, with the root in a fresh temporary folder.
class DebugDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kiln_debug_dir_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    root_env_.set(root_.string());
    set_compile_debug(true);
  }
  void TearDown() override {
    set_compile_debug(std::nullopt);
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  // The only run folder under the root.
  fs::path run_folder() const {
    auto names = entries(root_);
    EXPECT_EQ(names.size(), 1u);
    return names.empty() ? root_ : root_ / *names.begin();
  }

  fs::path root_;
  EnvVar root_env_{"KILN_COMPILE_DEBUG_DIR"};
};

TEST_F(DebugDirTest, OffGivesNoFolder) {
  set_compile_debug(false);
  EXPECT_FALSE(DebugDir::for_compilation("f_graph_0").has_value());
  EXPECT_TRUE(entries(root_).empty());
}

TEST_F(DebugDirTest, EnvironmentSwitch) {
  EnvVar debug("KILN_COMPILE_DEBUG");
  set_compile_debug(std::nullopt);
  debug.unset();
  EXPECT_FALSE(compile_debug_enabled());
  for (const char* on : {"1", "true", "on", "TRUE", "On"}) {
    debug.set(on);
    EXPECT_TRUE(compile_debug_enabled()) << on;
  }
  for (const char* off : {"0", "false", "off", "", "yes please"}) {
    debug.set(off);
    EXPECT_FALSE(compile_debug_enabled()) << off;
  }
  debug.set("1");
  set_compile_debug(false);  // the override wins
  EXPECT_FALSE(compile_debug_enabled());
}

TEST_F(DebugDirTest, LayoutIsRootRunCompilationFile) {
  auto dir = DebugDir::for_compilation("f_graph_0");
  ASSERT_TRUE(dir.has_value());
  EXPECT_TRUE(entries(root_).empty());  // created on first write
  fs::path written = dir->write("graph.txt", "%x : f32[4]\n");
  fs::path run = run_folder();
  std::string expected_run = "run_[0-9]{8}_[0-9]{6}-pid_" + std::to_string(::getpid());
  EXPECT_TRUE(std::regex_match(run.filename().string(), std::regex(expected_run)))
      << run.filename();
  EXPECT_EQ(written, run / "f_graph_0" / "graph.txt");
  EXPECT_EQ(dir->path(), run / "f_graph_0");
  EXPECT_EQ(read_file(written), "%x : f32[4]\n");
  EXPECT_EQ(entries(run / "f_graph_0"), (std::set<std::string>{"graph.txt"}));
}

TEST_F(DebugDirTest, RepeatedCompilationNameGetsASuffix) {
  auto a = DebugDir::for_compilation("g_graph_0");
  auto b = DebugDir::for_compilation("g_graph_0");
  auto c = DebugDir::for_compilation("g_graph_0");
  ASSERT_TRUE(a && b && c);
  a->write("x.txt", "a");
  b->write("x.txt", "b");
  c->write("x.txt", "c");
  fs::path run = run_folder();
  EXPECT_EQ(entries(run), (std::set<std::string>{"g_graph_0", "g_graph_0_1", "g_graph_0_2"}));
  EXPECT_EQ(read_file(run / "g_graph_0" / "x.txt"), "a");
  EXPECT_EQ(read_file(run / "g_graph_0_1" / "x.txt"), "b");
  EXPECT_EQ(read_file(run / "g_graph_0_2" / "x.txt"), "c");
}

TEST_F(DebugDirTest, ExistingFolderOnDiskIsNotReused) {
  // A folder this process did not hand out (another run's, or made by hand) is left alone.
  auto first = DebugDir::for_compilation("probe");
  ASSERT_TRUE(first);
  first->write("p.txt", "");
  fs::path run = run_folder();
  fs::create_directories(run / "h_graph_0");
  auto dir = DebugDir::for_compilation("h_graph_0");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->path(), run / "h_graph_0_1");
}

TEST_F(DebugDirTest, ExistingFileIsNeverOverwritten) {
  auto dir = DebugDir::for_compilation("k");
  ASSERT_TRUE(dir);
  fs::path p0 = dir->write("output_code.py", "first");
  fs::path p1 = dir->write("output_code.py", "second");
  fs::path p2 = dir->write("output_code.py", "third");
  fs::path n0 = dir->write("README", "no extension");
  fs::path n1 = dir->write("README", "again");
  EXPECT_EQ(p0.filename(), "output_code.py");
  EXPECT_EQ(p1.filename(), "output_code_1.py");
  EXPECT_EQ(p2.filename(), "output_code_2.py");
  EXPECT_EQ(n1.filename(), "README_1");
  EXPECT_EQ(read_file(p0), "first");
  EXPECT_EQ(read_file(p1), "second");
  EXPECT_EQ(read_file(p2), "third");
  EXPECT_EQ(read_file(n0), "no extension");
  // Only the published files: no temporary file is left behind.
  EXPECT_EQ(entries(dir->path()),
            (std::set<std::string>{"output_code.py", "output_code_1.py", "output_code_2.py",
                                   "README", "README_1"}));
}

TEST_F(DebugDirTest, NamesAreSanitized) {
  auto dir = DebugDir::for_compilation("my fn/<lambda>");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->path().filename(), "my_fn__lambda_");
  auto dots = DebugDir::for_compilation("..");
  ASSERT_TRUE(dots);
  EXPECT_EQ(dots->path().filename(), "__");
  auto empty = DebugDir::for_compilation("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->path().filename(), "_");
  fs::path p = dir->write("../escape.txt", "x");
  EXPECT_EQ(p, dir->path() / "___escape.txt");
  EXPECT_EQ(read_file(p), "x");
  EXPECT_EQ(dir->write("a-b_c.1.txt", "y").filename(), "a-b_c.1.txt");
}

TEST_F(DebugDirTest, UnwritableRootRaisesNamingThePath) {
  fs::path blocker = root_ / "a_regular_file";
  std::ofstream(blocker) << "not a folder";
  root_env_.set((blocker / "debug").string());
  auto dir = DebugDir::for_compilation("f_graph_0");
  ASSERT_TRUE(dir);
  std::string path = (blocker / "debug").string();
  EXPECT_TRUE(throws_error([&] { dir->write("graph.txt", "x"); },
                           {"compile debug: cannot create the folder", path}));
  EXPECT_EQ(read_file(blocker), "not a folder");
}

}  // namespace
}  // namespace kiln::debug
