#pragma once
// kiln::cuda: devices, streams, events and the caching allocator's statistics (PyTorch's
// torch.cuda). The header is the same with and without CUDA: a build without the toolkit reports
// is_available() == false and raises kiln::Error ("kiln was built without CUDA") from the other
// entry points, so code and tests written against it build everywhere.
#include <kiln/core/dtype.h>
#include <kiln/core/tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>

// The CUDA runtime's handle types (cudaStream_t is CUstream_st*, cudaEvent_t is CUevent_st*),
// declared here so that this header needs no CUDA headers.
struct CUstream_st;
struct CUevent_st;

namespace kiln::cuda {

// True when kiln was built with CUDA and at least one device is usable.
bool is_available();
// Number of visible devices (0 without CUDA or without a driver).
int device_count();
int current_device();
// Raises kiln::Error for an index outside [0, device_count()).
void set_device(int device);
// Waits for all work on the device (-1: the current device).
void synchronize(int device = -1);

// Makes `device` current for the guard's lifetime (-1 leaves the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
};

// A CUDA stream on one device. A copy refers to the same stream; a stream made by create() is
// destroyed (after its work finishes) when its last copy goes. Kernels launched by kiln go to the
// current stream of their device.
class Stream {
 public:
  // A new stream on `device` (-1: current) that does not synchronize with the default stream;
  // high_priority: the device's highest priority (its kernels get SMs first, as PyTorch's
  // high-priority pool streams; collectives overlapping compute use one).
  static Stream create(int device = -1, bool high_priority = false);
  // The device's legacy default stream.
  static Stream default_stream(int device = -1);

  int device() const { return device_; }
  CUstream_st* handle() const { return handle_; }
  // Waits for the stream's work.
  void synchronize() const;
  // True when all its work has finished.
  bool query() const;
  bool operator==(const Stream& o) const { return handle_ == o.handle_ && device_ == o.device_; }

 private:
  Stream(std::shared_ptr<CUstream_st> owned, CUstream_st* handle, int device)
      : owned_(std::move(owned)), handle_(handle), device_(device) {}
  std::shared_ptr<CUstream_st> owned_;
  CUstream_st* handle_ = nullptr;
  int device_ = 0;
};

// The calling thread's current stream on `device` (-1: current device); the default stream
// until set.
Stream current_stream(int device = -1);
void set_current_stream(const Stream& stream);

// Makes `stream` (and its device) current for the guard's lifetime.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_stream_;
  DeviceGuard device_guard_;
};

// A CUDA event: recorded on a stream, waited on, and timed against another event.
class Event {
 public:
  explicit Event(bool enable_timing = false);
  Event(Event&&) noexcept = default;
  Event& operator=(Event&&) noexcept = default;

  // Records on `stream` (default: the current stream of the current device).
  void record();
  void record(const Stream& stream);
  // Waits until the recorded work has finished.
  void synchronize() const;
  bool query() const;
  // Milliseconds between this event and `end`, both recorded and finished; needs enable_timing.
  float elapsed_ms(const Event& end) const;
  CUevent_st* handle() const { return event_.get(); }

 private:
  struct Destroy {
    void operator()(CUevent_st* e) const noexcept;
  };
  std::unique_ptr<CUevent_st, Destroy> event_;
  int device_ = 0;
  bool timing_ = false;
  bool recorded_ = false;
};

// The caching allocator (-1: current device). allocated: bytes in blocks held by tensors (sizes
// rounded as the cache rounds them); reserved: allocated plus cached free blocks.
size_t memory_allocated(int device = -1);
size_t memory_reserved(int device = -1);
// The most memory_allocated reached since the last reset_peak_memory_stats (or the start), as
// PyTorch's torch.cuda.max_memory_allocated.
size_t max_memory_allocated(int device = -1);
void reset_peak_memory_stats(int device = -1);
// Returns every cached free block to the driver (blocks still in use stay).
void empty_cache();

// Whether float32 matrix products on CUDA may use TF32 tensor cores (10-bit mantissas, several
// times faster): off by default, as PyTorch's torch.backends.cuda.matmul.allow_tf32. Settable
// without CUDA (it then changes nothing).
void set_matmul_allow_tf32(bool allow);
bool matmul_allow_tf32();

// Whether float32 convolutions on CUDA may use TF32 tensor cores: on by default, as PyTorch's
// torch.backends.cudnn.allow_tf32 (off: FMA kernels, matching the CPU to float32 rounding).
void set_cudnn_allow_tf32(bool allow);
bool cudnn_allow_tf32();
// Whether a convolution's first call of each problem times cuDNN's algorithms and keeps the
// fastest (off: cuDNN's heuristics choose), as PyTorch's torch.backends.cudnn.benchmark.
void set_cudnn_benchmark(bool on);
bool cudnn_benchmark();
// Whether convolutions go through cuDNN's graph API (its engines, as PyTorch's cuDNN v8 path),
// falling back to the legacy convolution API only where it has no plan: on by default. Off, every
// convolution runs through the legacy API (as PyTorch's TORCH_CUDNN_V8_API_DISABLED=1).
void set_cudnn_graph_api(bool on);
bool cudnn_graph_api();

// A named range on the profilers' timelines (NVTX, as torch.cuda.nvtx.range): Nsight Systems
// shows it, and Nsight Compute's --nvtx-include keeps only the kernels launched inside it. Costs
// nothing unless a profiler is attached; a no-op without CUDA.
class ProfileRange {
 public:
  explicit ProfileRange(const char* name);
  ~ProfileRange();
  ProfileRange(const ProfileRange&) = delete;
  ProfileRange& operator=(const ProfileRange&) = delete;
};

// A CPU tensor in page-locked memory (cudaHostAlloc), which host<->device copies read and write
// at full bandwidth and asynchronously.
Tensor pinned_empty(IntList sizes, DType dtype = DType::Float32);

}  // namespace kiln::cuda
