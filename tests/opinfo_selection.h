#pragma once
// The op-info sweeps (gradcheck, decompositions, inductor) run every op; an environment variable
// holding a comma list of full op names ("add,gelu") restricts one to those, for working on a few
// ops at a time.
#include <kiln/ops/registry.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace kiln::testing {

inline bool selected_by(const char* variable, const ops::OpDef& op) {
  const char* env = std::getenv(variable);
  if (env == nullptr || *env == '\0') return true;
  std::stringstream list(env);
  for (std::string name; std::getline(list, name, ',');) {
    if (name == op.full_name()) return true;
  }
  return false;
}

// Ops whose outputs are uninitialized memory: a sweep compares only their metadata.
inline bool uninitialized_output(const ops::OpDef& op) {
  const std::string name = op.full_name();
  return name == "empty" || name == "empty_like" || name == "empty_strided";
}

}  // namespace kiln::testing
