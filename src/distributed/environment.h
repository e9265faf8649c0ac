#pragma once
// Reading the launcher's environment variables (RANK, WORLD_SIZE, MASTER_PORT, ...).
#include <optional>
#include <string>

namespace kiln::distributed::detail {

std::optional<std::string> env_string(const char* name);
// nullopt when unset; raises kiln::Error naming the variable when it is not an integer.
std::optional<int> env_int(const char* name);

}  // namespace kiln::distributed::detail
