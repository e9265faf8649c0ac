// kiln::cuda::ProfileRange through NVTX 3 (header-only: it finds the profiler's injection
// library at run time, and does nothing when none is attached).
#include <kiln/cuda/cuda.h>

#include <nvtx3/nvToolsExt.h>

namespace kiln::cuda {

ProfileRange::ProfileRange(const char* name) { nvtxRangePushA(name); }
ProfileRange::~ProfileRange() { nvtxRangePop(); }

}  // namespace kiln::cuda
