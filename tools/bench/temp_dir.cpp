#include "temp_dir.h"

#include <stdlib.h>

#include <kiln/core/error.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kiln_bench {

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  KILN_CHECK(::mkdtemp(buffer.data()) != nullptr, "cannot create a folder {}: {}", pattern,
             std::strerror(errno));
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace kiln_bench
