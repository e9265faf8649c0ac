// Writing safetensors files atomically: a temporary file next to the target, renamed over it
// once every byte is written and flushed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/errno_text.h"
#include "serialize/safetensors_format.h"

namespace kiln::safetensors {
namespace {

using json = nlohmann::json;

// A temporary file that is removed unless committed (renamed to its target).
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& target) : target_(target) {
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; fd_ < 0; ++attempt) {
      path_ = fmt::format("{}.{}.{}.tmp", target, ::getpid(), counter.fetch_add(1));
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      KILN_CHECK(fd_ >= 0 || (errno == EEXIST && attempt < 100),
                 "safetensors.save: cannot create {}: {}", path_, errno_text());
    }
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write(const void* data, size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      KILN_CHECK(w > 0, "safetensors.save: cannot write {}: {}", path_, errno_text());
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  void commit() {
    KILN_CHECK(::fsync(fd_) == 0, "safetensors.save: cannot flush {}: {}", path_, errno_text());
    int rc = ::close(fd_);
    fd_ = -1;
    KILN_CHECK(rc == 0, "safetensors.save: cannot close {}: {}", path_, errno_text());
    KILN_CHECK(::rename(path_.c_str(), target_.c_str()) == 0,
               "safetensors.save: cannot rename {} to {}: {}", path_, target_, errno_text());
    committed_ = true;
  }

 private:
  std::string target_, path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void save(const std::string& path, const TensorMap& tensors, const Metadata& metadata) {
  // Larger elements first, then by name: with the data section 8-byte aligned, every tensor's
  // offset is then a multiple of its element size (the Python package's order).
  std::vector<std::pair<std::string, Tensor>> order;
  for (const auto& [name, t] : tensors) {
    KILN_CHECK(name != "__metadata__",
               "safetensors.save: '__metadata__' is reserved, not a tensor name");
    KILN_CHECK(t.defined(), "safetensors.save: tensor '{}' is undefined", name);
    KILN_CHECK(t.is_cpu(), "safetensors.save: tensor '{}' is on {}; move it to the CPU first", name,
               t.device().str());
    order.emplace_back(name, t);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second.itemsize() > b.second.itemsize();
  });

  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : order) {
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    header[name] = {{"dtype", std::string(detail::file_dtype_name(t.dtype()))},
                    {"shape", shape},
                    {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    throw_error(
        fmt::format("safetensors.save: cannot encode the header of {}: {}", path, e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned

  TemporaryFile file(path);
  unsigned char prefix[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(n >> (8 * i));
  file.write(prefix, 8);
  file.write(text.data(), text.size());
  for (const auto& [name, t] : order) {
    if (t.numel() == 0) continue;
    Tensor c = t.contiguous();
    file.write(c.data_ptr(), c.nbytes());
  }
  file.commit();
}

}  // namespace kiln::safetensors
