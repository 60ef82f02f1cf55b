// ConstantValueFromAttributes: every Constant attribute form the Constant kernel will see.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "importer/constant_attribute.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

Attributes With(const std::string& name, AttributeValue value) {
  Attributes a;
  a.Set(name, std::move(value));
  return a;
}

TEST(ConstantAttributeTest, TensorValueIsReturnedAsIs) {
  Tensor t = *Tensor::FromVector<int32_t>({2, 2}, {1, 2, 3, 4});
  auto v = ConstantValueFromAttributes(With("value", t), "Constant 'c'");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->type(), ElementType::kInt32);
  EXPECT_EQ(v->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(v->data<int32_t>()[3], 4);
}

TEST(ConstantAttributeTest, ScalarsAreRankZero) {
  auto f = ConstantValueFromAttributes(With("value_float", 2.5f), "Constant 'c'");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->type(), ElementType::kFloat32);
  EXPECT_EQ(f->rank(), 0);
  EXPECT_EQ(f->data<float>()[0], 2.5f);
  auto i = ConstantValueFromAttributes(With("value_int", int64_t{-9}), "Constant 'c'");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->type(), ElementType::kInt64);
  EXPECT_EQ(i->rank(), 0);
  EXPECT_EQ(i->data<int64_t>()[0], -9);
}

TEST(ConstantAttributeTest, ListsAreRankOne) {
  auto f = ConstantValueFromAttributes(With("value_floats", std::vector<float>{1, 2, 3}), "Constant 'c'");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(f->data<float>()[2], 3.0f);
  auto i = ConstantValueFromAttributes(With("value_ints", std::vector<int64_t>{}), "Constant 'c'");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->type(), ElementType::kInt64);
  EXPECT_EQ(i->shape(), (std::vector<int64_t>{0}));
}

TEST(ConstantAttributeTest, Errors) {
  EXPECT_TRUE(HasError(ConstantValueFromAttributes(With("value_string", std::string("x")), "Constant 'c'").status(),
                       absl::StatusCode::kUnimplemented, {"Constant 'c'", "value_string"}));
  EXPECT_TRUE(HasError(ConstantValueFromAttributes(With("value_strings", std::vector<std::string>{"x"}), "Constant 'c'")
                           .status(),
                       absl::StatusCode::kUnimplemented, {"value_strings"}));
  EXPECT_TRUE(HasError(ConstantValueFromAttributes(Attributes(), "Constant 'c'").status(),
                       absl::StatusCode::kInvalidArgument, {"Constant 'c'", "found none"}));
  Attributes two = With("value_int", int64_t{1});
  two.Set("value_float", 1.0f);
  EXPECT_TRUE(HasError(ConstantValueFromAttributes(two, "Constant 'c'").status(), absl::StatusCode::kInvalidArgument,
                       {"found value_float, value_int"}));
  EXPECT_TRUE(HasError(ConstantValueFromAttributes(With("value_int", 1.0f), "Constant 'c'").status(),
                       absl::StatusCode::kInvalidArgument, {"Constant 'c'", "value_int"}));
}

}  // namespace
}  // namespace attune::testing
