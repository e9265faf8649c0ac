#pragma once
// A fresh private folder, removed with everything in it when the object goes away: an empty code
// cache for a cold compile, and a place for the JSON the plot script reads.
#include <filesystem>
#include <string>

namespace kiln_bench {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln_bench
