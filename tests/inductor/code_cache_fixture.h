#pragma once
// The code cache tests' fixture: an empty cache folder per test and a module exporting kiln_add.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "inductor/code_cache.h"
#include "inductor/inductor_test_util.h"
#include "test_util.h"

namespace kiln::inductor {

namespace fs = std::filesystem;

using AddFunction = int (*)(int, int);

inline AddFunction add_of(const LoadedModule& module) {
  return reinterpret_cast<AddFunction>(module.symbol("kiln_add"));
}

inline std::set<std::string> file_names(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.insert(e.path().filename().string());
  return names;
}

inline unsigned mode_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

// Each test gets an empty cache folder (KILN_CACHE_DIR) and the default compiler settings.
class CodeCache : public ::testing::Test {
 protected:
  CodeCache() : cache_env_("KILN_CACHE_DIR", (folder_.path() / "cache").string()) {}

  // The entry folder of `source` under the default settings.
  fs::path entry_of(const std::string& source) {
    return cache_entry_dir(cache_key(source, config_, {}));
  }
  std::shared_ptr<const LoadedModule> load(const std::string& source) {
    return load_or_compile(source, config_, {}, "test_kernel");
  }

  kiln::testing::TemporaryFolder folder_;
  kiln::testing::ScopedEnv cache_env_;
  CompilerConfig config_ = CompilerConfig::from_environment();
};

}  // namespace kiln::inductor
