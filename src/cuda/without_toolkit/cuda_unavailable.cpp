// kiln::cuda without the CUDA toolkit (cmake/cuda.cmake compiles this file only then): no
// device is available, every other entry point raises, and tensors on a CUDA device cannot be
// made (the allocator registered here raises the same message as make_storage's caller sees).
#include <kiln/core/error.h>
#include <kiln/core/storage.h>
#include <kiln/cuda/cuda.h>
#include <kiln/cuda/graph.h>

#include "cuda/cudnn_conv_pass.h"
#include "cuda/cudnn_graph_conv.h"
#include "cuda/runtime_compile.h"

#include <atomic>

namespace kiln::cuda {
namespace {

[[noreturn]] void unavailable() { throw_error("kiln was built without CUDA"); }

class NoCudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override {
    throw_error("cannot allocate a tensor on a CUDA device: kiln was built without CUDA");
  }
};

[[maybe_unused]] const bool registered = [] {
  static NoCudaAllocator allocator;
  set_allocator(DeviceType::CUDA, &allocator);
  return true;
}();

}  // namespace

bool is_available() { return false; }
int device_count() { return 0; }
int current_device() { unavailable(); }
void set_device(int) { unavailable(); }
void synchronize(int) { unavailable(); }

DeviceGuard::DeviceGuard(int) : previous_(0) { unavailable(); }
DeviceGuard::~DeviceGuard() { (void)previous_; }  // never made: the constructor raises

Stream Stream::create(int, bool) { unavailable(); }
Stream Stream::default_stream(int) { unavailable(); }
void Stream::synchronize() const { unavailable(); }
bool Stream::query() const { unavailable(); }
Stream current_stream(int) { unavailable(); }
void set_current_stream(const Stream&) { unavailable(); }

StreamGuard::StreamGuard(const Stream& stream) : previous_stream_(stream), device_guard_(0) {}
StreamGuard::~StreamGuard() = default;

void Event::Destroy::operator()(CUevent_st*) const noexcept {}
Event::Event(bool) { unavailable(); }
void Event::record() { unavailable(); }
void Event::record(const Stream&) { unavailable(); }
void Event::synchronize() const { unavailable(); }
bool Event::query() const { unavailable(); }
float Event::elapsed_ms(const Event&) const {
  (void)device_, (void)timing_, (void)recorded_;  // the fields of the CUDA build, unused here
  unavailable();
}

ProfileRange::ProfileRange(const char*) {}
ProfileRange::~ProfileRange() = default;

size_t memory_allocated(int) { unavailable(); }
size_t memory_reserved(int) { unavailable(); }
size_t max_memory_allocated(int) { unavailable(); }
void reset_peak_memory_stats(int) { unavailable(); }
void empty_cache() { unavailable(); }

struct Graph::State {};
Graph::Graph() : state_(std::make_unique<State>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
void Graph::capture_begin() { unavailable(); }
void Graph::capture_end() { unavailable(); }
void Graph::capture_abort() noexcept {}
void Graph::replay() { unavailable(); }
bool Graph::captured() const { return false; }
uint64_t Graph::random_counters() const { return 0; }
bool Graph::owns(const void*) const { return false; }
bool is_capturing(int) { unavailable(); }
bool is_graph_memory(const void*) { return false; }

// Nothing reads the switches without CUDA; they are kept for their getters.
namespace {
std::atomic<bool> allow_tf32{false};
std::atomic<bool> cudnn_tf32{true};
std::atomic<bool> cudnn_timed{false};
std::atomic<bool> cudnn_graph{true};
}  // namespace
void set_matmul_allow_tf32(bool allow) { allow_tf32.store(allow); }
bool matmul_allow_tf32() { return allow_tf32.load(); }
size_t cudnn_conv_plans_cached() { return 0; }  // no convolution ran on a GPU
size_t cudnn_graph_plans_cached() { return 0; }
size_t cudnn_graph_problems_without_plan() { return 0; }
void set_cudnn_graph_api(bool on) { cudnn_graph.store(on); }
bool cudnn_graph_api() { return cudnn_graph.load(); }
void set_cudnn_allow_tf32(bool allow) { cudnn_tf32.store(allow); }
bool cudnn_allow_tf32() { return cudnn_tf32.load(); }
void set_cudnn_benchmark(bool on) { cudnn_timed.store(on); }
bool cudnn_benchmark() { return cudnn_timed.load(); }
Tensor pinned_empty(IntList, DType) { unavailable(); }

std::string architecture(int) { unavailable(); }
std::string device_name(int) { unavailable(); }
std::string compiler_version() { unavailable(); }
std::string compile_to_cubin(const std::string&, const std::string&, const std::string&) {
  unavailable();
}
KernelLibrary::KernelLibrary(std::string_view) { unavailable(); }
KernelLibrary::~KernelLibrary() { (void)library_; }  // never made: the constructor raises
const void* KernelLibrary::kernel(const std::string&) const { unavailable(); }
void KernelLibrary::launch(const void*, int64_t, int, int64_t, const void*) { unavailable(); }

}  // namespace kiln::cuda
