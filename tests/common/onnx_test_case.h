// Reads ONNX backend test folders (model.onnx holding one node, and
// test_data_set_0/input_N.pb, output_N.pb) into kernel calls for op tests.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {

struct BackendTestCase {
  std::string name;  // the folder name, e.g. "test_attention_3d"
  /// Op, domain, opset, attributes; inputs by node input position (an
  /// omitted optional input is an empty Tensor); num_outputs = node outputs.
  KernelCall call;
  /// Expected values by node output position; empty where the node omits
  /// that output.
  std::vector<Tensor> expected;
};

/// The node/ folder of the backend test data (BackendNodeDir()).
std::string BackendTestRoot();
/// Folder names under BackendTestRoot() that start with `prefix`, sorted.
std::vector<std::string> ListBackendTests(const std::string& prefix);
/// Loads one test folder (a name under BackendTestRoot(), or a path).
absl::StatusOr<BackendTestCase> LoadBackendTestCase(const std::string& name_or_path);
/// Decodes a serialised TensorProto file.
absl::StatusOr<Tensor> LoadTensorProtoFile(const std::string& path);

}  // namespace attune::testing
