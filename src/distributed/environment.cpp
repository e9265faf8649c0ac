#include "distributed/environment.h"

#include <kiln/core/error.h>

#include <charconv>
#include <cstdlib>

namespace kiln::distributed::detail {

std::optional<std::string> env_string(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::optional<int> env_int(const char* name) {
  auto text = env_string(name);
  if (!text) return std::nullopt;
  int value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  KILN_CHECK(error == std::errc() && end == text->data() + text->size(),
             "init_process_group: environment variable {}='{}' is not an integer", name, *text);
  return value;
}

}  // namespace kiln::distributed::detail
