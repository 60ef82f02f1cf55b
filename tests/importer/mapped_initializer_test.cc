// Initializers used in place from a mapping of the model file: the same values
// as the copy path (the same bytes imported from memory), aligned ones inside
// the mapping, hostile files refused or read exactly as the copy path does.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "attune/session.h"
#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::TensorProto;

// Whether `p` lies in a mapping of the file at `path` (from /proc/self/maps).
bool InFileMapping(const void* p, const std::string& path) {
  const std::string real = std::filesystem::canonical(path).string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto address = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, name;
    fields >> range >> perms >> offset >> device >> inode >> name;
    const size_t dash = range.find('-');
    const uintptr_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (address >= start && address < end) return name == real;
  }
  return false;
}

std::vector<float> Values(int n, float seed) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = seed + 0.37f * static_cast<float>(i) - 0.011f * static_cast<float>(i * i);
  return v;
}

// An initializer of the test model: stored raw inline, or in "weights.bin" at
// `external_offset`; an inline one's payload starts at an offset that is
// `offset_mod4` modulo 4 in the file.
struct Init {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> values;  // 0 or 1 for the bool one
  bool is_bool = false;
  int64_t external_offset = -1;  // inline when negative
  int offset_mod4 = -1;          // any when negative
};

std::string Payload(const Init& init) {
  if (!init.is_bool) return RawBytes(init.values);
  std::string bytes;
  for (float v : init.values) bytes.push_back(static_cast<char>(v != 0 ? 1 : 0));
  return bytes;
}

constexpr char kWeightsFile[] = "weights.bin";

// Input "x" float32[16]; outputs sum = x + A, prod = x * U (U unaligned),
// pick = Where(B, x, A) (B bool), proj = x · W (W [16, cols]), ext = x + E
// (external, aligned), ext_u = x + EU (external, 2 bytes off alignment).
class MappedModel {
 public:
  explicit MappedModel(int64_t cols) {
    inits_ = {
        {"A", {16}, Values(16, 1.5f), false, -1, 0},
        {"U", {16}, Values(16, -2.25f), false, -1, 2},
        {"B", {16}, std::vector<float>(16, 0.0f), true, -1, -1},
        {"W", {16, cols}, Values(static_cast<int>(16 * cols), 0.125f), false, -1, 0},
        {"E", {16}, Values(16, 7.0f), false, 0, -1},
        {"EU", {16}, Values(16, -9.5f), false, 66, -1},
    };
    for (int i = 0; i < 16; i += 3) inits_[2].values[i] = 1.0f;
    // An inline payload is moved to the offset it wants by an unused uint8
    // initializer of the right size just before it (names would not do: the
    // nodes, serialized first, repeat them).
    pads_.assign(inits_.size(), 0);
    for (size_t k = 0; k < inits_.size(); ++k) {
      if (inits_[k].offset_mod4 < 0) continue;
      while (Bytes().find(Payload(inits_[k])) % 4 != static_cast<size_t>(inits_[k].offset_mod4)) ++pads_[k];
    }
  }

  // The model; with `typed`, every initializer inline in a typed field instead.
  onnx::ModelProto Build(bool typed) const {
    onnx::ModelProto m = MinimalModel();
    AddInput(m, "x", TensorProto::FLOAT, {16});
    for (const char* out : {"sum", "prod", "pick", "proj", "ext", "ext_u"}) AddOutput(m, out, TensorProto::FLOAT);
    AddNode(m, "Add", {"x", "A"}, {"sum"});
    AddNode(m, "Mul", {"x", "U"}, {"prod"});
    AddNode(m, "Where", {"B", "x", "A"}, {"pick"});
    AddNode(m, "MatMul", {"x", "W"}, {"proj"});
    AddNode(m, "Add", {"x", "E"}, {"ext"});
    AddNode(m, "Add", {"x", "EU"}, {"ext_u"});
    for (size_t k = 0; k < inits_.size(); ++k) {
      const Init& init = inits_[k];
      if (!typed && pads_[k] > 0) {
        TensorProto* pad = AddInitializer(m, absl::StrCat("pad", k), TensorProto::UINT8, {pads_[k]});
        pad->set_raw_data(std::string(pads_[k], 'p'));
      }
      TensorProto* t = AddInitializer(m, init.name, init.is_bool ? TensorProto::BOOL : TensorProto::FLOAT, init.dims);
      if (typed) {
        for (float v : init.values) init.is_bool ? t->add_int32_data(v != 0) : t->add_float_data(v);
      } else if (init.external_offset >= 0) {
        t->set_data_location(TensorProto::EXTERNAL);
        for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
                 {"location", kWeightsFile},
                 {"offset", std::to_string(init.external_offset)},
                 {"length", std::to_string(init.values.size() * sizeof(float))}}) {
          auto* e = t->add_external_data();
          e->set_key(key);
          e->set_value(value);
        }
      } else {
        t->set_raw_data(Payload(init));
      }
    }
    return m;
  }

  std::string Bytes() const { return Serialize(Build(false)); }

  std::string WeightsFile() const {
    std::string bytes;
    for (const Init& init : inits_) {
      if (init.external_offset < 0) continue;
      if (bytes.size() < static_cast<size_t>(init.external_offset)) bytes.resize(init.external_offset, '\x5a');
      bytes.replace(init.external_offset, init.values.size() * sizeof(float), RawBytes(init.values));
    }
    return bytes;
  }

  // Writes the model (or `bytes` in its place) and its weights into `dir`; returns the model's path.
  std::string Write(const TempDir& dir, const std::string& bytes = "") const {
    WriteFile(dir / kWeightsFile, WeightsFile());
    WriteFile(dir / "model.onnx", bytes.empty() ? Bytes() : bytes);
    return dir / "model.onnx";
  }

 private:
  std::vector<Init> inits_;
  std::vector<int64_t> pads_;  // bytes of the unused initializer before each, 0 for none
};

// The constants every node or graph output reads, by name.
std::map<std::string, const Tensor*> Constants(const Graph& graph) {
  std::map<std::string, const Tensor*> out;
  for (const Node* node : graph.nodes())
    for (const Value* in : node->inputs())
      if (in != nullptr && in->constant() != nullptr) out[in->name()] = in->constant();
  for (const Value* v : graph.outputs())
    if (v->constant() != nullptr) out[v->name()] = v->constant();
  return out;
}

std::string BytesOf(const Tensor& t) { return std::string(static_cast<const char*>(t.raw_data()), t.byte_size()); }

// Importing the file at `path` gives what importing its bytes (copied) gives:
// the same error, or constants of the same types, shapes and bytes.
void ExpectSameAsCopyPath(const std::string& path, const std::string& dir, const std::string& context) {
  auto mapped = ImportModelFromFile(path);
  auto copied = ImportModelFromBytes(ReadFile(path), dir);
  ASSERT_EQ(mapped.ok(), copied.ok()) << context << ": from the file " << mapped.status() << ", from bytes "
                                      << copied.status();
  if (!copied.ok()) {
    EXPECT_EQ(mapped.status().code(), copied.status().code()) << context;
    // The file's parse errors add " (file '...')".
    EXPECT_TRUE(absl::StartsWith(mapped.status().message(), copied.status().message()))
        << context << ": " << mapped.status() << " vs " << copied.status();
    return;
  }
  const auto want = Constants(**copied);
  const auto got = Constants(**mapped);
  ASSERT_EQ(got.size(), want.size()) << context;
  for (const auto& [name, tensor] : want) {
    ASSERT_TRUE(got.contains(name)) << context << ": " << name;
    const Tensor& t = *got.at(name);
    EXPECT_EQ(t.type(), tensor->type()) << context << ": " << name;
    EXPECT_EQ(t.shape(), tensor->shape()) << context << ": " << name;
    EXPECT_EQ(BytesOf(t), BytesOf(*tensor)) << context << ": " << name;
  }
}

TEST(MappedInitializerTest, ValuesMatchTheCopyPathAndAlignedOnesAreMapped) {
  TempDir dir;
  const MappedModel model(64);  // W is 4 KiB: it spans whole pages
  const std::string path = model.Write(dir);
  ExpectSameAsCopyPath(path, dir.path(), "the model");

  auto graph = ImportModelFromFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto data = [&](const std::string& base) { return (*graph)->FindValue(base)->constant()->raw_data(); };
  EXPECT_TRUE(InFileMapping(data("A"), path));
  EXPECT_TRUE(InFileMapping(data("W"), path));
  EXPECT_TRUE(InFileMapping(data("E"), dir / kWeightsFile));
  // Unaligned, bool and external unaligned tensors are copies.
  EXPECT_FALSE(InFileMapping(data("U"), path));
  EXPECT_FALSE(InFileMapping(data("B"), path));
  EXPECT_FALSE(InFileMapping(data("EU"), dir / kWeightsFile));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data("A")) % sizeof(float), 0u);
}

TEST(MappedInitializerTest, MappingLivesAsLongAsATensorUsesIt) {
  TempDir dir;
  const MappedModel model(4);
  const std::string path = model.Write(dir);
  auto graph = ImportModelFromFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Tensor a = *(*graph)->FindValue("A")->constant();
  const std::string before = BytesOf(a);
  graph->reset();
  EXPECT_TRUE(InFileMapping(a.raw_data(), path));
  EXPECT_EQ(BytesOf(a), before);
  EXPECT_EQ(a.data<float>()[0], 1.5f);
}

TEST(MappedInitializerTest, SessionOutputsMatchTheCopyPath) {
  TempDir dir;
  const MappedModel model(64);
  auto mapped = Session::Create(model.Write(dir));
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  auto copied = Session::CreateFromBytes(Serialize(model.Build(/*typed=*/true)));
  ASSERT_TRUE(copied.ok()) << copied.status();
  auto x = Tensor::FromVector<float>({16}, Values(16, 0.5f));
  ASSERT_TRUE(x.ok());
  auto got = (*mapped)->Run({{"x", *x}});
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = (*copied)->Run({{"x", *x}});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].first, (*want)[i].first);
    EXPECT_EQ((*got)[i].second.shape(), (*want)[i].second.shape()) << (*got)[i].first;
    EXPECT_EQ(BytesOf((*got)[i].second), BytesOf((*want)[i].second)) << (*got)[i].first;
  }
}

// Every truncation, and every byte overwritten with a few values (lengths that
// overrun, varints that never end, wire types that do not exist): the file
// behaves as its bytes do on the copy path, and nothing crashes.
TEST(MappedInitializerTest, DamagedFilesBehaveAsTheCopyPath) {
  TempDir dir;
  const MappedModel model(4);
  const std::string bytes = model.Bytes();
  for (size_t size = 1; size < bytes.size(); ++size) {
    const std::string path = model.Write(dir, bytes.substr(0, size));
    ExpectSameAsCopyPath(path, dir.path(), absl::StrCat("truncated to ", size, " bytes"));
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (const char value : {'\xff', '\x7f', '\x80', '\x0f'}) {
      std::string damaged = bytes;
      if (damaged[at] == value) continue;
      damaged[at] = value;
      const std::string path = model.Write(dir, damaged);
      ExpectSameAsCopyPath(path, dir.path(), absl::StrCat("byte ", at, " set to ", static_cast<int>(value)));
    }
  }
}

std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}

// A length-delimited field: tag, length, payload.
std::string Field(int number, const std::string& payload) {
  return Varint((static_cast<uint64_t>(number) << 3) | 2) + Varint(payload.size()) + payload;
}

// `m` serialized with one more initializer whose serialized form is `tensor`.
std::string WithInitializerBytes(onnx::ModelProto m, const std::string& tensor) {
  const std::string graph = m.graph().SerializeAsString() + Field(5, tensor);
  m.clear_graph();
  return m.SerializeAsString() + Field(7, graph);
}

// A model whose output is the float32[4] initializer "W", serialized as `tensor`.
std::string ModelReturningW(const std::string& tensor) {
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, "W", TensorProto::FLOAT, {4});
  return WithInitializerBytes(m, tensor);
}

TensorProto FloatW() {
  TensorProto t;
  t.set_name("W");
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(4);
  return t;
}

std::vector<float> ImportedW(const std::string& path) {
  auto graph = ImportModelFromFile(path);
  if (!graph.ok()) return {};
  const Tensor* w = (*graph)->FindValue("W")->constant();
  return {w->data<float>(), w->data<float>() + w->num_elements()};
}

TEST(MappedInitializerTest, DuplicatedRawDataKeepsTheLastAsProtobufDoes) {
  TempDir dir;
  const std::vector<float> first = {1, 2, 3, 4}, last = {5, 6, 7, 8};
  TensorProto t = FloatW();
  t.set_raw_data(RawBytes(first));
  const std::string path = dir / "model.onnx";
  WriteFile(path, ModelReturningW(t.SerializeAsString() + Field(9, RawBytes(last))));
  ExpectSameAsCopyPath(path, dir.path(), "two raw_data fields");
  EXPECT_EQ(ImportedW(path), last);
}

TEST(MappedInitializerTest, RawDataBesideFloatDataWinsAsOnTheCopyPath) {
  TempDir dir;
  const std::vector<float> raw = {1, 2, 3, 4};
  TensorProto t = FloatW();
  t.set_raw_data(RawBytes(raw));
  for (float v : {9.f, 9.f, 9.f, 9.f}) t.add_float_data(v);
  const std::string path = dir / "model.onnx";
  WriteFile(path, ModelReturningW(t.SerializeAsString()));
  ExpectSameAsCopyPath(path, dir.path(), "raw_data and float_data");
  EXPECT_EQ(ImportedW(path), raw);
}

TEST(MappedInitializerTest, BadRawDataGivesTheCopyPathErrors) {
  TempDir dir;
  const std::string path = dir / "model.onnx";
  TensorProto short_raw = FloatW();
  short_raw.set_raw_data(std::string(12, '\1'));
  WriteFile(path, ModelReturningW(short_raw.SerializeAsString()));
  ExpectSameAsCopyPath(path, dir.path(), "raw_data too short");
  EXPECT_TRUE(HasError(ImportModelFromFile(path).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W': raw_data holds 12 bytes but float32[4] needs 16"}));

  TensorProto external = FloatW();
  external.set_raw_data(std::string(16, '\1'));
  external.set_data_location(TensorProto::EXTERNAL);
  WriteFile(path, ModelReturningW(external.SerializeAsString()));
  ExpectSameAsCopyPath(path, dir.path(), "raw_data with data_location EXTERNAL");
  EXPECT_TRUE(HasError(ImportModelFromFile(path).status(), absl::StatusCode::kInvalidArgument,
                       {"has data_location EXTERNAL but also holds inline data"}));

  // The raw_data length runs past its tensor, then past the file.
  TensorProto ok = FloatW();
  ok.set_raw_data(std::string(16, '\2'));
  std::string bytes = ModelReturningW(ok.SerializeAsString());
  const size_t length_at = bytes.find(std::string(16, '\2')) - 1;
  ASSERT_EQ(bytes[length_at], '\x10');
  for (const char overrun : {'\x11', '\x7f'}) {
    bytes[length_at] = overrun;
    WriteFile(path, bytes);
    ExpectSameAsCopyPath(path, dir.path(), "raw_data overruns");
    EXPECT_TRUE(HasError(ImportModelFromFile(path).status(), absl::StatusCode::kInvalidArgument,
                         {"not a valid ONNX model: failed to parse protobuf"}));
  }
}

}  // namespace
}  // namespace attune::testing
