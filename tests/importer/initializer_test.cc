// Initializers in every storage form, and every way their payload can be wrong.
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::TensorProto;

// A model whose only output is the initializer `name` (so it counts as used).
onnx::ModelProto ModelReturning(const std::string& name) {
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, name, 0);
  return m;
}

const Tensor& ConstantOf(const Graph& g, const std::string& name) {
  const Value* v = g.FindValue(name);
  EXPECT_NE(v, nullptr) << name;
  EXPECT_TRUE(v->is_constant()) << name;
  return *v->constant();
}

TEST(InitializerTest, RawDataFloat) {
  onnx::ModelProto m = ModelReturning("W");
  AddInitializer(m, "W", TensorProto::FLOAT, {2, 3})->set_raw_data(RawBytes<float>({1, 2, 3, 4, 5, -6.5f}));
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& t = ConstantOf(**g, "W");
  EXPECT_EQ(t.type(), ElementType::kFloat32);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<float>(t.values<float>().begin(), t.values<float>().end()),
            (std::vector<float>{1, 2, 3, 4, 5, -6.5f}));
  // The value is typed and shaped from the constant; it is not a graph input.
  EXPECT_TRUE((*g)->inputs().empty());
  EXPECT_EQ((*g)->FindValue("W")->shape()->size(), 2u);
}

TEST(InitializerTest, RawDataInt64AndBoolNormalised) {
  onnx::ModelProto m = ModelReturning("I");
  AddOutput(m, "B", 0);
  AddInitializer(m, "I", TensorProto::INT64, {3})->set_raw_data(RawBytes<int64_t>({-1, 1LL << 40, 7}));
  AddInitializer(m, "B", TensorProto::BOOL, {3})->set_raw_data(std::string("\x00\x01\x02", 3));
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& i = ConstantOf(**g, "I");
  EXPECT_EQ(i.data<int64_t>()[0], -1);
  EXPECT_EQ(i.data<int64_t>()[1], 1LL << 40);
  EXPECT_EQ(i.data<int64_t>()[2], 7);
  const Tensor& b = ConstantOf(**g, "B");
  EXPECT_EQ(b.type(), ElementType::kBool);
  EXPECT_EQ(b.data<uint8_t>()[0], 0);
  EXPECT_EQ(b.data<uint8_t>()[1], 1);
  EXPECT_EQ(b.data<uint8_t>()[2], 1);
}

TEST(InitializerTest, RawDataOfWrongLengthNamesTheTensor) {
  onnx::ModelProto m = ModelReturning("W");
  AddInitializer(m, "W", TensorProto::FLOAT, {2, 3})->set_raw_data(RawBytes<float>({1, 2, 3}));
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "raw_data holds 12 bytes", "float32[2, 3] needs 24"}));
}

TEST(InitializerTest, FloatDataAndScalar) {
  onnx::ModelProto m = ModelReturning("F");
  AddOutput(m, "S", 0);
  auto* f = AddInitializer(m, "F", TensorProto::FLOAT, {2});
  f->add_float_data(0.25f);
  f->add_float_data(-3.0f);
  AddInitializer(m, "S", TensorProto::FLOAT, {})->add_float_data(42.0f);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ConstantOf(**g, "F").data<float>()[0], 0.25f);
  EXPECT_EQ(ConstantOf(**g, "F").data<float>()[1], -3.0f);
  const Tensor& s = ConstantOf(**g, "S");
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_EQ(s.data<float>()[0], 42.0f);
}

// Every type ONNX keeps in int32_data, with values that survive only a correct conversion.
TEST(InitializerTest, Int32DataForSmallTypes) {
  onnx::ModelProto m = MinimalModel();
  struct Case {
    const char* name;
    int32_t type;
    std::vector<int32_t> values;
  };
  const std::vector<Case> cases = {
      {"i32", TensorProto::INT32, {-2147483647 - 1, 5}},
      {"i16", TensorProto::INT16, {-32768, 1234}},
      {"i8", TensorProto::INT8, {-128, 127}},
      {"u8", TensorProto::UINT8, {255, 3}},
      {"u16", TensorProto::UINT16, {65535, 9}},
      {"b", TensorProto::BOOL, {1, 0}},
      {"f16", TensorProto::FLOAT16, {0x3C00, 0xC000}},   // 1.0, -2.0
      {"bf16", TensorProto::BFLOAT16, {0x3F80, 0x4040}},  // 1.0, 3.0
  };
  for (const Case& c : cases) {
    AddOutput(m, c.name, 0);
    auto* t = AddInitializer(m, c.name, c.type, {2});
    for (int32_t v : c.values) t->add_int32_data(v);
  }
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Graph& graph = **g;
  EXPECT_EQ(ConstantOf(graph, "i32").data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ConstantOf(graph, "i16").data<int16_t>()[0], -32768);
  EXPECT_EQ(ConstantOf(graph, "i16").data<int16_t>()[1], 1234);
  EXPECT_EQ(ConstantOf(graph, "i8").data<int8_t>()[0], -128);
  EXPECT_EQ(ConstantOf(graph, "i8").data<int8_t>()[1], 127);
  EXPECT_EQ(ConstantOf(graph, "u8").data<uint8_t>()[0], 255);
  EXPECT_EQ(ConstantOf(graph, "u16").data<uint16_t>()[0], 65535);
  EXPECT_EQ(ConstantOf(graph, "b").type(), ElementType::kBool);
  EXPECT_EQ(ConstantOf(graph, "b").data<uint8_t>()[0], 1);
  EXPECT_EQ(ConstantOf(graph, "b").data<uint8_t>()[1], 0);
  EXPECT_EQ(HalfToFloat(ConstantOf(graph, "f16").data<Float16>()[0]), 1.0f);
  EXPECT_EQ(HalfToFloat(ConstantOf(graph, "f16").data<Float16>()[1]), -2.0f);
  EXPECT_EQ(BFloat16ToFloat(ConstantOf(graph, "bf16").data<BFloat16>()[0]), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(ConstantOf(graph, "bf16").data<BFloat16>()[1]), 3.0f);
}

TEST(InitializerTest, Int64DoubleAndUint64Data) {
  onnx::ModelProto m = MinimalModel();
  for (const char* name : {"i64", "f64", "u32", "u64"}) AddOutput(m, name, 0);
  auto* i64 = AddInitializer(m, "i64", TensorProto::INT64, {2});
  i64->add_int64_data(std::numeric_limits<int64_t>::min());
  i64->add_int64_data(3);
  auto* f64 = AddInitializer(m, "f64", TensorProto::DOUBLE, {1});
  f64->add_double_data(0.1);
  auto* u32 = AddInitializer(m, "u32", TensorProto::UINT32, {1});
  u32->add_uint64_data(4000000000u);
  auto* u64 = AddInitializer(m, "u64", TensorProto::UINT64, {1});
  u64->add_uint64_data(18446744073709551615ull);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ConstantOf(**g, "i64").data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ConstantOf(**g, "f64").data<double>()[0], 0.1);
  EXPECT_EQ(ConstantOf(**g, "u32").data<uint32_t>()[0], 4000000000u);
  EXPECT_EQ(ConstantOf(**g, "u64").data<uint64_t>()[0], 18446744073709551615ull);
}

TEST(InitializerTest, ZeroElementTensorsNeedNoData) {
  onnx::ModelProto m = ModelReturning("E");
  AddOutput(m, "R", 0);
  AddInitializer(m, "E", TensorProto::FLOAT, {0, 3});
  AddInitializer(m, "R", TensorProto::INT64, {0})->set_raw_data("");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ConstantOf(**g, "E").num_elements(), 0);
  EXPECT_EQ(ConstantOf(**g, "E").shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ConstantOf(**g, "R").shape(), (std::vector<int64_t>{0}));
}

TEST(InitializerTest, TypedFieldCountMustMatchTheDims) {
  onnx::ModelProto m = ModelReturning("W");
  auto* t = AddInitializer(m, "W", TensorProto::FLOAT, {2, 2});
  for (float v : {1.f, 2.f, 3.f}) t->add_float_data(v);
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "float_data holds 3 values", "needs 4"}));

  onnx::ModelProto none = ModelReturning("X");
  AddInitializer(none, "X", TensorProto::INT64, {5});  // no payload at all
  EXPECT_TRUE(HasError(Import(none).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'X'", "int64_data holds 0 values", "needs 5"}));
}

TEST(InitializerTest, UnsupportedTypeIsAnErrorOnlyWhenUsed) {
  onnx::ModelProto unused = MinimalModel();
  AddInput(unused, "x", TensorProto::FLOAT, {2});
  AddOutput(unused, "x", TensorProto::FLOAT, {2});
  AddInitializer(unused, "names", TensorProto::STRING, {1})->add_string_data("hello");
  AddInitializer(unused, "f8", 17, {1})->set_raw_data(std::string("\x01", 1));
  auto g = Import(unused);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("names"), nullptr);

  onnx::ModelProto used = MinimalModel();
  AddOutput(used, "y");
  AddInitializer(used, "names", TensorProto::STRING, {1})->add_string_data("hello");
  AddNode(used, "Identity", {"names"}, {"y"}, "id");
  EXPECT_TRUE(HasError(Import(used).status(), absl::StatusCode::kUnimplemented,
                       {"initializer 'names'", "element type string"}));

  onnx::ModelProto complex = ModelReturning("c");
  AddInitializer(complex, "c", 14, {1})->set_raw_data(std::string(8, '\0'));
  EXPECT_TRUE(HasError(Import(complex).status(), absl::StatusCode::kUnimplemented,
                       {"initializer 'c'", "complex64"}));
}

TEST(InitializerTest, UnknownDataTypeIsRefused) {
  onnx::ModelProto m = ModelReturning("W");
  AddInitializer(m, "W", 1000, {1})->set_raw_data("abcd");
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "unknown element type (data_type 1000)"}));

  onnx::ModelProto undefined = ModelReturning("U");
  AddInitializer(undefined, "U", 0, {1});
  EXPECT_TRUE(HasError(Import(undefined).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'U'", "no element type"}));
}

TEST(InitializerTest, DimsWhoseProductOverflowsInt64) {
  onnx::ModelProto m = ModelReturning("W");
  AddInitializer(m, "W", TensorProto::FLOAT, {1LL << 32, 1LL << 32})->set_raw_data("abcd");
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "overflows int64"}));

  onnx::ModelProto negative = ModelReturning("N");
  AddInitializer(negative, "N", TensorProto::FLOAT, {2, -3});
  EXPECT_TRUE(HasError(Import(negative).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'N'", "negative dimension"}));
}

TEST(InitializerTest, SizeLimitIsCheckedBeforeAllocating) {
  // 2^40 floats would be 4 TiB: refused from the dims alone, before any allocation.
  onnx::ModelProto huge = ModelReturning("W");
  AddInitializer(huge, "W", TensorProto::FLOAT, {1LL << 20, 1LL << 20});
  EXPECT_TRUE(HasError(Import(huge).status(), absl::StatusCode::kResourceExhausted,
                       {"initializer 'W'", "float32[1048576, 1048576]", "size limit"}));

  onnx::ModelProto small = ModelReturning("B");
  AddInitializer(small, "B", TensorProto::FLOAT, {100})->set_raw_data(RawBytes(std::vector<float>(100, 1.0f)));
  ImportOptions options;
  options.max_tensor_bytes = 256;
  EXPECT_TRUE(HasError(Import(small, "", options).status(), absl::StatusCode::kResourceExhausted,
                       {"initializer 'B'", "size limit of 256 bytes"}));
  options.max_tensor_bytes = 400;
  EXPECT_TRUE(Import(small, "", options).ok());
}

TEST(InitializerTest, InitializerThatIsAlsoAnInputIsAConstant) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddInput(m, "W", TensorProto::FLOAT, {2});  // IR < 4 style: listed as input too
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  AddInitializer(m, "W", TensorProto::FLOAT, {2})->set_raw_data(RawBytes<float>({1, 2}));
  AddNode(m, "Add", {"x", "W"}, {"y"}, "add");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "x");
  EXPECT_TRUE((*g)->FindValue("W")->is_constant());
  EXPECT_FALSE((*g)->FindValue("W")->is_graph_input());
}

TEST(InitializerTest, DuplicateInitializerAndNamelessInitializer) {
  onnx::ModelProto dup = ModelReturning("W");
  AddInitializer(dup, "W", TensorProto::FLOAT, {1})->add_float_data(1);
  AddInitializer(dup, "W", TensorProto::FLOAT, {1})->add_float_data(2);
  EXPECT_TRUE(HasError(Import(dup).status(), absl::StatusCode::kInvalidArgument, {"initializer 'W'", "twice"}));

  onnx::ModelProto nameless = MinimalModel();
  AddInitializer(nameless, "", TensorProto::FLOAT, {1})->add_float_data(1);
  EXPECT_TRUE(HasError(Import(nameless).status(), absl::StatusCode::kInvalidArgument, {"initializer #0 has no name"}));
}

}  // namespace
}  // namespace attune::testing
