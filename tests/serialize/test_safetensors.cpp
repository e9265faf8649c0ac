// safetensors: round trips of every dtype, a file written by the Python package, and malformed
// files (truncated, bad lengths, bad JSON, bad offsets) that must raise kiln::Error.
#include <unistd.h>

#include <kiln/kiln.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace kiln::safetensors {
namespace {

namespace fs = std::filesystem;
using kiln::testing::all_close;
using kiln::testing::throws_error;

// A fresh, empty directory per test, removed afterwards.
class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("kiln_safetensors_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  static void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
  }
  static std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // A file from a header's JSON text and the data section's bytes.
  static std::string make_file(const std::string& header, const std::string& data,
                               std::optional<uint64_t> header_len = std::nullopt) {
    uint64_t n = header_len.value_or(header.size());
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return out + header + data;
  }
  // Expects load (and load_metadata, which validates the same header) to raise with `parts`.
  ::testing::AssertionResult rejects(const std::string& bytes,
                                     std::initializer_list<std::string> parts) {
    std::string path = file("bad.safetensors");
    write_bytes(path, bytes);
    auto r = throws_error([&] { load(path); }, parts);
    if (!r) return r;
    return throws_error([&] { load_metadata(path); }, parts);
  }

  fs::path dir_;
};

// __FILE__ may be relative to the build directory (Ninja passes relative paths): resolve it
// against the working directory and the executable's ancestors.
std::string fixture_path() {
  const fs::path relative =
      fs::path(__FILE__).parent_path() / "data" / "python_written.safetensors";
  if (relative.is_absolute()) return relative.string();
  std::vector<fs::path> roots{fs::current_path()};
  for (fs::path d = fs::canonical("/proc/self/exe").parent_path(); d != d.parent_path();
       d = d.parent_path())
    roots.push_back(d);
  for (const auto& root : roots)
    if (fs::exists(root / relative)) return (root / relative).string();
  return relative.string();
}

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  TensorMap in;
  Tensor ramp = arange(12, TensorOptions(kFloat64)).reshape({3, 4});
  for (DType d : {kFloat64, kFloat32, kFloat16, kBFloat16, kInt64, kInt32, kInt16, kInt8, kUInt8}) {
    in[std::string(dtype_name(d))] = (ramp * 3 - (is_signed(d) ? 7 : 0)).to(d);
  }
  in["bool"] = tensor({true, false, false, true, true});
  in["transposed"] = ramp.t();  // saved in row-major order of its logical shape
  in["scalar"] = scalar_tensor(-1.5, TensorOptions(kFloat32));
  in["empty"] = zeros({0, 3}, TensorOptions(kInt32));
  in["odd"] = tensor({1, 2, 3}, TensorOptions(kUInt8));
  const Metadata meta{{"format", "pt"}, {"note", "ünïcode ok"}};
  save(file("a.safetensors"), in, meta);

  TensorMap out = load(file("a.safetensors"));
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(out.count(name));
    const Tensor& u = out.at(name);
    EXPECT_EQ(u.dtype(), t.dtype());
    EXPECT_EQ(IntList(u.sizes()), t.sizes());
    EXPECT_TRUE(u.is_contiguous());
    EXPECT_EQ(u.tolist<double>(), t.tolist<double>());
  }
  EXPECT_EQ(load_metadata(file("a.safetensors")), meta);

  // The layout the reference writer uses, read with an independent JSON parser: header padded to
  // 8 bytes, larger elements first so that every offset is aligned.
  std::string bytes = read_bytes(file("a.safetensors"));
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["__metadata__"]["format"], "pt");
  EXPECT_EQ(header["float32"]["dtype"], "F32");
  EXPECT_EQ(header["transposed"]["shape"], nlohmann::json::array({4, 3}));
  uint64_t data_end = 0;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    uint64_t begin = info["data_offsets"][0];
    EXPECT_EQ(begin % itemsize(in.at(name).dtype()), 0u) << name;
    data_end = std::max<uint64_t>(data_end, info["data_offsets"][1]);
  }
  EXPECT_EQ(bytes.size(), 8 + n + data_end);
}

TEST_F(SafetensorsTest, LoadsAFileWrittenByThePythonPackage) {
  // tests/serialize/data/make_python_fixture.py wrote it; the values restate its formulas.
  TensorMap t = load(fixture_path());
  EXPECT_EQ(t.size(), 17u);
  Tensor ramp = arange(6, TensorOptions(kFloat64)).reshape({2, 3});
  auto expect = [&](const std::string& name, DType dtype, const Tensor& values) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(t.count(name));
    EXPECT_EQ(t.at(name).dtype(), dtype);
    EXPECT_TRUE(all_close(t.at(name).to(kFloat64), values.to(kFloat64), 0, 0));
  };
  expect("f64", kFloat64, ramp * 0.25 - 1);
  expect("f32", kFloat32, ramp * 0.5 - 1);
  expect("f16", kFloat16, ramp * 0.75 - 2);
  expect("bf16", kBFloat16, ramp * 2 - 3);
  expect("i32", kInt32, ramp * -7 + 1);
  expect("i16", kInt16, ramp * 300 - 700);
  expect("i8", kInt8, ramp * -20 + 50);
  expect("u8", kUInt8, ramp * 50);
  expect("bool", kBool, tensor({{false, true, false}, {true, false, true}}));
  expect("u16", kInt32, ramp * 13000);
  expect("u32", kInt64, ramp * 800000000);
  expect("f8_e4m3", kFloat16, tensor({0.5, -1.75, 448.0, std::ldexp(1.0, -9), -0.0, 3.0}));
  expect("f8_e5m2", kFloat16,
         tensor({1.5, -0.25, 57344.0, std::numeric_limits<double>::infinity(), std::ldexp(1.0, -16),
                 -3.0}));
  expect("scalar", kFloat32, scalar_tensor(2.5, TensorOptions(kFloat64)));
  expect("odd_u8", kUInt8, tensor({1, 2, 3}));
  EXPECT_EQ(IntList(t.at("empty").sizes()), (IntList{0, 4}));
  // Aligned tensors view the one mapping, at their offsets' distance (f64 at 48, f32 at 96).
  EXPECT_EQ(static_cast<char*>(t.at("f32").data_ptr()) - static_cast<char*>(t.at("f64").data_ptr()),
            48);
  // int64 beyond float64's exact range: compare as integers.
  EXPECT_EQ(t.at("i64").tolist<int64_t>(),
            (std::vector<int64_t>{-3, 1000000004, 2000000011, 3000000018, 4000000025, 5000000032}));
  EXPECT_EQ(load_metadata(fixture_path()), (Metadata{{"format", "pt"}, {"source", "kiln test"}}));
}

TEST_F(SafetensorsTest, TensorsOutliveTheMapAndNeverWriteTheFile) {
  std::string path = file("v.safetensors");
  save(path, {{"w", tensor({1.0, 2.0, 3.0})}});
  const std::string before = read_bytes(path);
  Tensor w;
  {
    TensorMap m = load(path);
    w = m.at("w");
  }
  w.mul_(10);  // copy-on-write pages: the file keeps its bytes
  EXPECT_TRUE(all_close(w, tensor({10.0, 20.0, 30.0}), 0, 0));
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_TRUE(all_close(load(path).at("w"), tensor({1.0, 2.0, 3.0}), 0, 0));
}

TEST_F(SafetensorsTest, MisalignedTensorsAndOddBoolBytesAreCopied) {
  // A U8[3] packs the F32[2] after it at byte 3: not 4-byte aligned, so it is copied out.
  float f[2] = {1.25f, -8.5f};
  std::string data = std::string("\x01\x02\x03", 3) + std::string(reinterpret_cast<char*>(f), 8) +
                     std::string("\x00\x02", 2);
  write_bytes(file("m.safetensors"),
              make_file(R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)"
                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[3,11]},)"
                        R"("c":{"dtype":"BOOL","shape":[2],"data_offsets":[11,13]}})",
                        data));
  TensorMap t = load(file("m.safetensors"));
  EXPECT_TRUE(all_close(t.at("b"), tensor({1.25, -8.5}), 0, 0));
  EXPECT_EQ(t.at("c").tolist<int64_t>(), (std::vector<int64_t>{0, 1}));  // byte 2 reads as true
}

TEST_F(SafetensorsTest, SaveIsAtomic) {
  std::string path = file("keep.safetensors");
  save(path, {{"x", tensor({1.0f, 2.0f})}});
  const std::string original = read_bytes(path);

  EXPECT_TRUE(throws_error(
      [&] {
        save(path, {{"x", tensor({3.0f})}, {"bad", Tensor()}});
      },
      {"tensor 'bad' is undefined"}));
  EXPECT_TRUE(throws_error([&] { save(path, {{"__metadata__", tensor({1.0f})}}); }, {"reserved"}));
  EXPECT_TRUE(
      throws_error([&] { save(file("no/such/dir/x.safetensors"), {}); }, {"cannot create"}));
  EXPECT_EQ(read_bytes(path), original);
  // Only the kept file remains: no temporary files left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);

  save(path, {{"x", tensor({5.0f})}});  // a successful save replaces it
  EXPECT_TRUE(all_close(load(path).at("x"), tensor({5.0f}), 0, 0));
}

TEST_F(SafetensorsTest, RejectsMalformedFiles) {
  const std::string ok_header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\0');
  write_bytes(file("ok.safetensors"), make_file(ok_header, data));
  EXPECT_EQ(load(file("ok.safetensors")).size(), 1u);

  EXPECT_TRUE(rejects("", {"too short"}));
  EXPECT_TRUE(rejects("\x05\x00\x00", {"too short"}));
  EXPECT_TRUE(rejects(make_file(ok_header, data, ok_header.size() + 100), {"runs past the end"}));
  EXPECT_TRUE(rejects(make_file(ok_header, data, uint64_t(1) << 63), {"exceeds the limit"}));
  EXPECT_TRUE(rejects(make_file(ok_header, data, ~uint64_t(0)), {"exceeds the limit"}));
  EXPECT_TRUE(rejects(make_file(ok_header, data.substr(0, 5)), {"outside the data section"}));
  EXPECT_TRUE(rejects(make_file(ok_header, data + "xx"), {"trailing bytes"}));
  EXPECT_TRUE(rejects(make_file("{\"a\": [1, 2", data), {"not valid JSON"}));
  EXPECT_TRUE(rejects(make_file("not json at all", data), {"not valid JSON"}));
  EXPECT_TRUE(rejects(make_file("[1, 2]", data), {"should be a JSON object"}));
  EXPECT_TRUE(rejects(make_file(R"({"a": 3})", data), {"'a' should be an object"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F32","shape":[2]}})", data), {"data_offsets"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", data),
                      {"unknown dtype 'Q7'"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
                      {"non-negative integer"}));
  EXPECT_TRUE(
      rejects(make_file(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", data),
              {"non-negative integer"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data),
                      {"needs 12 bytes", "span 8"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data),
                      {"end < begin"}));
  EXPECT_TRUE(
      rejects(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})", data),
              {"data_offsets [begin, end]"}));
  EXPECT_TRUE(
      rejects(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[1000,1008]}})", data),
              {"outside the data section"}));
  EXPECT_TRUE(rejects(
      make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551608,0]}})",
                data),
      {"end < begin"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"U8","shape":[6],"data_offsets":[0,6]},)"
                                R"("b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
                                data),
                      {"overlaps tensor 'a'"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                R"("b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
                                data),
                      {"gap"}));
  // Shapes whose element count or byte count overflows 64 bits.
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],)"
                                R"("data_offsets":[0,8]}})",
                                data),
                      {"too many elements"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F64","shape":[4611686018427387904],)"
                                R"("data_offsets":[0,8]}})",
                                data),
                      {"too large"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F32","shape":[0,18446744073709551615],)"
                                R"("data_offsets":[0,0]}})",
                                ""),
                      {"too large"}));
  EXPECT_TRUE(rejects(make_file(R"({"__metadata__":{"k":1}})", ""), {"should be a string"}));
  EXPECT_TRUE(rejects(make_file(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", "xx"),
                      {"whole number of bytes"}));
  fs::create_directories(file("a_directory"));
  EXPECT_TRUE(throws_error([&] { load(file("a_directory")); }, {"not a regular file"}));
  EXPECT_TRUE(throws_error([&] { load(file("missing")); }, {"cannot open"}));
}

TEST_F(SafetensorsTest, DtypesKilnLacksRaiseNamingThem) {
  std::string path = file("u64.safetensors");
  write_bytes(path, make_file(R"({"__metadata__":{"a":"b"},)"
                              R"("a":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}})",
                              std::string(8, '\x01')));
  EXPECT_TRUE(throws_error([&] { load(path); }, {"'a'", "U64", "no dtype"}));
  EXPECT_EQ(load_metadata(path).at("a"), "b");  // the header itself is valid
}

TEST_F(SafetensorsTest, EveryTruncationAndByteFlipIsAnErrorOrALoad) {
  // Every prefix of the Python-written file, and single-byte corruptions of its header: each
  // either raises kiln::Error or loads (a flip may keep the header valid), never crashes.
  const std::string good = read_bytes(fixture_path());
  ASSERT_GT(good.size(), 1000u);
  std::string path = file("fuzz.safetensors");
  // Every length in the prefix and header's first bytes and near the end, every 7th elsewhere.
  for (size_t len = 0; len < good.size(); len += (len < 24 || len + 24 > good.size()) ? 1 : 7) {
    write_bytes(path, good.substr(0, len));
    EXPECT_THROW(load(path), Error) << "prefix of " << len << " bytes";
  }
  uint64_t n = 0;
  std::memcpy(&n, good.data(), 8);
  for (size_t pos = 0; pos < 8 + n; pos += 13) {
    for (unsigned char v : {'\0', '1', '}', '"', '-'}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(v);
      write_bytes(path, bad);
      try {
        load(path);
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace
}  // namespace kiln::safetensors
