// Attune's arity table against ONNX's own schemas (libonnx from Debian, ONNX
// 1.12: opsets up to 17): for every op Attune runs, at every opset from its
// kernel's first one up to 17, the min/max input and output counts agree.
#include <algorithm>

#include "core/validate/op_arity.h"
#include "gtest/gtest.h"
#include "onnx/defs/schema.h"
#include "ops/registry.h"

namespace attune {
namespace {

constexpr int kLibOnnxNewestOpset = 17;

TEST(OpAritySchemaTest, MatchesOnnxSchemas) {
  int compared = 0;
  for (const KernelRegistry::Entry* e : DefaultKernelRegistry().Entries()) {
    if (!e->domain.empty()) continue;
    for (int opset = e->since_version; opset <= std::min(e->until_version, kLibOnnxNewestOpset); ++opset) {
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(e->op_type, opset, "");
      if (schema == nullptr || schema->Deprecated()) continue;
      const OpArity* a = FindOpArity("", e->op_type, opset);
      ASSERT_NE(a, nullptr) << e->op_type << " opset " << opset;
      SCOPED_TRACE(::testing::Message() << e->op_type << " opset " << opset);
      EXPECT_EQ(a->min_inputs, schema->min_input());
      EXPECT_EQ(a->max_inputs, schema->max_input());
      EXPECT_EQ(a->min_outputs, schema->min_output());
      EXPECT_EQ(a->max_outputs, schema->max_output());
      ++compared;
    }
  }
  EXPECT_GT(compared, 500);
}

}  // namespace
}  // namespace attune
