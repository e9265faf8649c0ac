#include "capture/chosen_backend.h"

#include <kiln/core/error.h>

namespace kiln::capture {

NamedBackend chosen_backend(const std::variant<std::string, Backend, NamedBackend>& backend) {
  NamedBackend chosen;
  if (const auto* name = std::get_if<std::string>(&backend)) {
    chosen = {*name, lookup_backend(*name), backend_traits(*name)};
  } else if (const auto* function = std::get_if<Backend>(&backend)) {
    chosen = {"user backend", *function, BackendTraits{}};
  } else {
    chosen = std::get<NamedBackend>(backend);
    KILN_CHECK(!chosen.name.empty(), "compile: the named backend has an empty name");
  }
  KILN_CHECK(static_cast<bool>(chosen.backend), "compile: the backend function of \"{}\" is empty",
             chosen.name);
  return chosen;
}

}  // namespace kiln::capture
