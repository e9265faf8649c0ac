#include <kiln/core/error.h>

namespace kiln {

void throw_error(const std::string& message) { throw Error(message); }

}  // namespace kiln
