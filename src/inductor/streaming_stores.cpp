#include "inductor/streaming_stores.h"

#include <kiln/core/error.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kiln::inductor {

namespace {

// "32768K", "1M" or a plain number of bytes, as sysfs writes cache sizes.
std::optional<int64_t> parse_cache_size(const std::string& text) {
  size_t end = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(end, 1);
  if (unit == "K") value *= 1024;
  if (unit == "M") value *= 1024 * 1024;
  return value > 0 ? std::optional<int64_t>(value) : std::nullopt;
}

std::optional<int64_t> read_last_level_cache_bytes() {
  // sysfs describes the cache instance CPU 0 shares (one CCX's L3 on AMD, the socket's on Intel);
  // sysconf may report the whole package's.
  int best_level = 0;
  std::optional<int64_t> best;
  std::error_code ec;
  const std::filesystem::path root = "/sys/devices/system/cpu/cpu0/cache";
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    std::ifstream level_file(entry.path() / "level"), type_file(entry.path() / "type"),
        size_file(entry.path() / "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction" || level <= best_level) continue;
    if (const auto bytes = parse_cache_size(size)) {
      best_level = level;
      best = bytes;
    }
  }
  if (best) return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE); l3 > 0) return l3;
  if (const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0) return l2;
#endif
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> last_level_cache_bytes() {
  static const std::optional<int64_t> bytes = read_last_level_cache_bytes();
  return bytes;
}

std::optional<int64_t> streaming_store_threshold(const std::optional<std::string>& option,
                                                 std::optional<int64_t> cache_bytes) {
  if (!option || *option == "auto") return cache_bytes;
  if (*option == "true") return 0;
  if (*option == "false") return std::nullopt;
  KILN_FAIL(
      "inductor: option \"streaming_stores\" must be \"auto\", \"true\" or \"false\", got \"{}\"",
      *option);
}

std::optional<int64_t> streaming_store_threshold(const BackendContext& context) {
  const auto it = context.options.find("streaming_stores");
  return streaming_store_threshold(
      it == context.options.end() ? std::nullopt : std::optional<std::string>(it->second),
      last_level_cache_bytes());
}

}  // namespace kiln::inductor
