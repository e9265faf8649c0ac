#pragma once
// Compile warnings (cache size limit reached, a backend falling back): sent to the handler set
// with kiln::set_warning_handler, or to stderr.
#include <string_view>

namespace kiln::capture {

void warn(std::string_view message);

}  // namespace kiln::capture
