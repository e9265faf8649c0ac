// libFuzzer target: any byte string given to the safetensors reader either loads (every tensor's
// bytes then readable) or raises kiln::Error; no crash, no read out of bounds, no allocation the
// file's size does not justify (libFuzzer's -malloc_limit_mb catches one).
#include <kiln/core/error.h>
#include <kiln/serialize/safetensors.h>

#include "file_fuzzers/memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kiln::fuzzing::MemoryFile file(data, size);
  try {
    kiln::safetensors::load_metadata(file.path());
  } catch (const kiln::Error&) {
  }
  try {
    const kiln::safetensors::TensorMap tensors = kiln::safetensors::load(file.path());
    volatile unsigned char sink = 0;
    for (const auto& [name, t] : tensors) {
      const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
      for (size_t i = 0; i < t.nbytes(); ++i) sink = sink ^ bytes[i];
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
