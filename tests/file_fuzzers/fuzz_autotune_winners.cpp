// libFuzzer target: any content of a code-cache entry's autotune winners file is read as winners
// or reported malformed (the cache then times again and rewrites it); no crash, no exception
// escapes other than kiln::Error.
#include <kiln/core/error.h>

#include "file_fuzzers/memory_file.h"
#include "inductor/autotune_winners.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kiln::fuzzing::MemoryFile file(data, size);
  try {
    const kiln::inductor::WinnersRead read =
        kiln::inductor::read_winners(file.path(), "0123456789abcdef0123456789abcdef", 2);
    if (read.winners && read.malformed) std::abort();  // one or the other
  } catch (const kiln::Error&) {
  }
  return 0;
}
