// Loading safetensors files: the file is memory-mapped and each tensor either views the mapping
// (its bytes aligned for its dtype and usable as they are) or is copied/converted out of it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/errno_text.h"
#include "serialize/safetensors_format.h"

namespace kiln::safetensors {
namespace {

using detail::Conversion;
using detail::TensorEntry;

// An open file descriptor, closed on scope exit.
class FileDescriptor {
 public:
  explicit FileDescriptor(const std::string& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    KILN_CHECK(fd_ >= 0, "safetensors: cannot open {}: {}", path, errno_text());
  }
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

  uint64_t regular_file_size(const std::string& path) const {
    struct stat st {};
    KILN_CHECK(::fstat(fd_, &st) == 0, "safetensors: cannot stat {}: {}", path, errno_text());
    KILN_CHECK(S_ISREG(st.st_mode), "safetensors: {} is not a regular file", path);
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  int fd_;
};

// A whole file mapped copy-on-write; unmapped when the last tensor viewing it goes.
class MappedFile {
 public:
  MappedFile(const FileDescriptor& fd, uint64_t size, const std::string& path) : size_(size) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
    KILN_CHECK(p != MAP_FAILED, "safetensors: cannot map {} ({} bytes): {}", path, size,
               errno_text());
    data_ = static_cast<unsigned char*>(p);
  }
  ~MappedFile() { ::munmap(data_, size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  unsigned char* data() const { return data_; }

 private:
  unsigned char* data_ = nullptr;
  uint64_t size_;
};

// float8_e4m3fn: no infinities; S.1111.111 is NaN; bias 7; subnormals m * 2^-9.
float f8e4m3_to_float(uint8_t b) {
  const int exp = (b >> 3) & 0xF, mant = b & 0x7;
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (exp == 0xF && mant == 0x7) return std::nanf("");
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
}

// Copies (converting where the file dtype is not kiln's) n elements from unaligned bytes.
void convert_into(void* out, const unsigned char* src, uint64_t n, const TensorEntry& e) {
  switch (e.dtype->conversion) {
    case Conversion::None:
      std::memcpy(out, src, n * (e.dtype->bits / 8));
      if (e.dtype->kiln_dtype == DType::Bool) {
        // C++ bools must hold 0 or 1; any other byte means true, as numpy reads it.
        auto* o = static_cast<unsigned char*>(out);
        for (uint64_t i = 0; i < n; ++i) o[i] = o[i] != 0;
      }
      return;
    case Conversion::U16ToInt32: {
      auto* o = static_cast<int32_t*>(out);
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        o[i] = v;
      }
      return;
    }
    case Conversion::U32ToInt64: {
      auto* o = static_cast<int64_t*>(out);
      for (uint64_t i = 0; i < n; ++i) {
        uint32_t v;
        std::memcpy(&v, src + 4 * i, 4);
        o[i] = v;
      }
      return;
    }
    case Conversion::F8E4M3ToF16: {
      Half table[256];
      for (int b = 0; b < 256; ++b) table[b] = Half(f8e4m3_to_float(static_cast<uint8_t>(b)));
      auto* o = static_cast<Half*>(out);
      for (uint64_t i = 0; i < n; ++i) o[i] = table[src[i]];
      return;
    }
    case Conversion::F8E5M2ToF16: {
      auto* o = static_cast<Half*>(out);
      for (uint64_t i = 0; i < n; ++i) o[i] = Half(static_cast<uint16_t>(src[i] << 8), FromBits{});
      return;
    }
    case Conversion::Unsupported:
      break;
  }
  throw_error(fmt::format("safetensors: tensor '{}': unsupported dtype {}", e.name, e.dtype->name));
}

bool bytes_are_bools(const unsigned char* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (p[i] > 1) return false;
  return true;
}

Tensor load_tensor(const TensorEntry& e, const std::shared_ptr<MappedFile>& file,
                   uint64_t data_start, const std::string& path) {
  KILN_CHECK(e.dtype->conversion != Conversion::Unsupported,
             "safetensors: {}: tensor '{}' has dtype {}, which kiln has no dtype for", path, e.name,
             e.dtype->name);
  const DType dtype = e.dtype->kiln_dtype;
  unsigned char* src = file->data() + data_start + e.begin;
  const uint64_t n = (e.end - e.begin) * 8 / e.dtype->bits;
  const bool viewable = e.dtype->conversion == Conversion::None && n > 0 &&
                        reinterpret_cast<uintptr_t>(src) % itemsize(dtype) == 0 &&
                        (dtype != DType::Bool || bytes_are_bools(src, n));
  if (viewable) {
    DimVector strides = contiguous_strides(IntList(e.shape));
    return from_blob(src, IntList(e.shape), IntList(strides), dtype,
                     [file](void*) {});  // the capture keeps the mapping alive
  }
  Tensor t = empty(IntList(e.shape), TensorOptions(dtype));
  if (n > 0) convert_into(t.data_ptr(), src, n, e);
  return t;
}

}  // namespace

TensorMap load(const std::string& path) {
  FileDescriptor fd(path);
  const uint64_t size = fd.regular_file_size(path);
  KILN_CHECK(size >= 8, "safetensors: {}: file of {} bytes is too short for a header length", path,
             size);
  auto file = std::make_shared<MappedFile>(fd, size, path);
  const uint64_t header_len = detail::checked_header_length(file->data(), size, path);
  detail::Header h =
      detail::parse_header(reinterpret_cast<const char*>(file->data() + 8), header_len, size, path);
  TensorMap tensors;
  for (const auto& e : h.tensors) tensors.emplace(e.name, load_tensor(e, file, h.data_start, path));
  return tensors;
}

Metadata load_metadata(const std::string& path) {
  FileDescriptor fd(path);
  const uint64_t size = fd.regular_file_size(path);
  auto read_exactly = [&](void* out, uint64_t n, uint64_t offset) {
    auto* p = static_cast<unsigned char*>(out);
    while (n > 0) {
      ssize_t r = ::pread(fd.get(), p, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      KILN_CHECK(r > 0, "safetensors: cannot read {}: {}", path,
                 r == 0 ? std::string("unexpected end of file") : errno_text());
      p += r;
      n -= static_cast<uint64_t>(r);
      offset += static_cast<uint64_t>(r);
    }
  };
  unsigned char prefix[8] = {};
  KILN_CHECK(size >= 8, "safetensors: {}: file of {} bytes is too short for a header length", path,
             size);
  read_exactly(prefix, 8, 0);
  const uint64_t header_len = detail::checked_header_length(prefix, size, path);
  std::string json(header_len, '\0');
  read_exactly(json.data(), header_len, 8);
  return detail::parse_header(json.data(), header_len, size, path).metadata;
}

}  // namespace kiln::safetensors
