// Streams (and the calling thread's current stream per device) and events.
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/cuda/cuda.h>

#include <vector>

namespace kiln::cuda {
namespace {

// Per thread, as in PyTorch: a stream set current on one thread leaves the others alone. Unset
// entries hold the default stream.
std::vector<Stream>& current_streams() {
  thread_local std::vector<Stream> streams = [] {
    std::vector<Stream> s;
    for (int d = 0; d < device_count(); ++d) s.push_back(Stream::default_stream(d));
    return s;
  }();
  return streams;
}

int resolve(int device) {
  return device < 0 ? current_device() : device_index(Device::cuda(device));
}

}  // namespace

Stream Stream::create(int device, bool high_priority) {
  device = resolve(device);
  DeviceGuard guard(device);
  int least = 0, greatest = 0;
  if (high_priority) KILN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  KILN_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
  // The deleter waits for the stream's work first: the caching allocator keys free blocks by
  // stream, and a later stream may reuse this handle's address.
  std::shared_ptr<CUstream_st> owned(s, [device](CUstream_st* h) {
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) return;
    (void)cudaSetDevice(device);
    (void)cudaStreamSynchronize(h);
    (void)cudaStreamDestroy(h);
    (void)cudaSetDevice(prev);
  });
  return Stream(std::move(owned), s, device);
}

Stream Stream::default_stream(int device) { return Stream(nullptr, nullptr, resolve(device)); }

void Stream::synchronize() const {
  DeviceGuard guard(device_);
  KILN_CUDA_CHECK(cudaStreamSynchronize(handle_));
}

bool Stream::query() const {
  DeviceGuard guard(device_);
  cudaError_t status = cudaStreamQuery(handle_);
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  KILN_CUDA_CHECK(status);
  return true;
}

Stream current_stream(int device) {
  return current_streams().at(static_cast<size_t>(resolve(device)));
}

void set_current_stream(const Stream& stream) {
  current_streams().at(static_cast<size_t>(stream.device())) = stream;
}

cudaStream_t stream_of(int device) {
  return current_streams().at(static_cast<size_t>(device)).handle();
}

StreamGuard::StreamGuard(const Stream& stream)
    : previous_stream_(current_stream(stream.device())), device_guard_(stream.device()) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  current_streams()[static_cast<size_t>(previous_stream_.device())] = previous_stream_;
}

// ---- events ----

void Event::Destroy::operator()(CUevent_st* e) const noexcept { (void)cudaEventDestroy(e); }

Event::Event(bool enable_timing) : device_(current_device()), timing_(enable_timing) {
  cudaEvent_t e = nullptr;
  KILN_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
  event_.reset(e);
}

void Event::record() { record(current_stream()); }

void Event::record(const Stream& stream) {
  KILN_CHECK(stream.device() == device_,
             "Event::record: the event belongs to cuda:{}, the stream "
             "to cuda:{}",
             device_, stream.device());
  DeviceGuard guard(device_);
  KILN_CUDA_CHECK(cudaEventRecord(event_.get(), stream.handle()));
  recorded_ = true;
}

void Event::synchronize() const {
  if (!recorded_) return;  // an unrecorded event has nothing to wait for (as in PyTorch)
  KILN_CUDA_CHECK(cudaEventSynchronize(event_.get()));
}

bool Event::query() const {
  if (!recorded_) return true;
  cudaError_t status = cudaEventQuery(event_.get());
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  KILN_CUDA_CHECK(status);
  return true;
}

float Event::elapsed_ms(const Event& end) const {
  KILN_CHECK(timing_ && end.timing_, "Event::elapsed_ms: both events need enable_timing=true");
  KILN_CHECK(recorded_ && end.recorded_,
             "Event::elapsed_ms: both events must be recorded before timing them");
  float ms = 0;
  KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, event_.get(), end.event_.get()));
  return ms;
}

}  // namespace kiln::cuda
