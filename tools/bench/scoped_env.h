#pragma once
// An environment variable set for a scope: KILN_CACHE_DIR pointed at a row's own code cache.
#include <string>

namespace kiln_bench {

// Sets an environment variable for its lifetime, then restores the previous value (or absence).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, previous_;
  bool had_previous_;
};

}  // namespace kiln_bench
