#pragma once
// The C library's message for the current errno, for errors about files and sockets.
#include <cerrno>
#include <cstring>
#include <string>

namespace kiln {

inline std::string errno_text() { return std::strerror(errno); }

}  // namespace kiln
