#pragma once
// Generated CUDA kernels ready to launch. The source of a program (generate_cuda) is compiled by
// NVRTC for the device's architecture, once per process and cached on disk: under
// <cache_dir()>/cuda/, <key>.cu (the source, kept for reading and for error messages) and
// <key>.cubin (the cubin followed by 32 hex digits of its content hash, checked on load: a
// truncated or corrupted entry is reported on perf_hints and rebuilt). key = content hash of the
// source, the architecture and NVRTC's version. Files are replaced whole (cache_files.h), so
// concurrent processes and crashes never leave a half-written entry behind.
#include "inductor/codegen_cuda.h"
#include "inductor/kernel_function.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace kiln::inductor {

// The kernels of `source` for CUDA device `device`; a launch runs on the current stream of the
// current device. `what` names the graph in errors. Raises kiln::Error with NVRTC's log when the
// source does not compile.
KernelLoader cuda_kernels(const CudaSource& source, size_t num_symbols, int device,
                          std::string_view what);

// The cubin of `source` for `architecture` ("sm_90"): from the disk cache when a verified entry
// is there, else compiled by NVRTC and stored (`kernels`: how many the source defines, for the
// compile_progress records). Needs NVRTC, not a GPU.
std::string cached_cubin(const std::string& source, const std::string& architecture,
                         std::string_view what, size_t kernels);

// How many cubins cuda_kernels and cached_cubin have compiled in this process (for tests).
size_t cuda_compilation_count();

// The folder of max-autotune's winners file for `source` on `device` (autotune.h): under
// <cache_dir()>/cuda/autotune/, per source, architecture, NVRTC and device model.
std::filesystem::path cuda_autotune_entry(const CudaSource& source, int device);

}  // namespace kiln::inductor
