#pragma once
// Helpers for the inductor's compiler and code cache tests: scoped environment variables,
// temporary folders and a tiny module source.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace kiln::testing {

// Sets or unsets an environment variable for the object's lifetime, then restores it.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* value = std::getenv(name)) saved_ = value;
  }
  ScopedEnv(const char* name, const std::string& value) : ScopedEnv(name) { set(value); }
  ~ScopedEnv() {
    if (saved_) {
      setenv(name_, saved_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  void set(const std::string& value) { setenv(name_, value.c_str(), 1); }
  void unset() { unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

// A fresh folder under the system's temporary folder, removed (with its content) at the end.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kiln_inductor_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    // Tests may leave read-only folders behind; make them removable first.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
      if (it->is_directory(ignored)) {
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
      }
    }
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A source defining extern "C" int kiln_add(int, int); `tag` goes into a comment, so that each
// test gets its own cache key (the in-process module map outlives a test's cache folder).
inline std::string add_source(const std::string& tag) {
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return "// " + tag + " " + std::to_string(::getpid()) + " " + std::to_string(now) +
         "\nextern \"C\" int kiln_add(int a, int b) { return a + b; }\n";
}

}  // namespace kiln::testing
