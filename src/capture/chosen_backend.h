#pragma once
// The backend CompileOptions::backend names, resolved: a registered name looked up with its
// traits, a backend function as "user backend" (static graphs only), a named backend as given.
#include <kiln/backends/backend.h>
#include <kiln/capture/compile.h>

namespace kiln::capture {

// Raises kiln::Error for an unregistered name or an empty function.
NamedBackend chosen_backend(const std::variant<std::string, Backend, NamedBackend>& backend);

}  // namespace kiln::capture
