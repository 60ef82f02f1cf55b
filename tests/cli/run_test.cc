// attune run on every example model: outputs match the stored PyTorch outputs.
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

class RunModelTest : public ::testing::TestWithParam<ModelCase> {
 protected:
  void RunAndCompare(const std::vector<std::string>& extra) {
    const ModelCase& m = GetParam();
    TempDir out;
    std::vector<std::string> args = {"run", m.model(), "--output-dir", out.path(), "--threads", "2"};
    for (const std::string& f : m.InputFlags()) args.push_back(f);
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.err, "");
    for (const std::string& name : m.OutputNames()) {
      const std::string want = m.dir + "/outputs/" + name + ".npy";
      const double diff = MaxAbsDiff(out / (name + ".npy"), want);
      EXPECT_LE(diff, ModelTolerance(m.info(), want, 1e-4, 4)) << m.name << " output " << name;
      EXPECT_NE(r.out.find("output     " + name + " "), std::string::npos) << r.out;
    }
  }
};

TEST_P(RunModelTest, FusedMatchesPyTorch) { RunAndCompare({}); }

TEST_P(RunModelTest, UnfusedMatchesPyTorch) {
  RunAndCompare({"--no-fuse"});
}

TEST_P(RunModelTest, FusionLineCountsFusedAttention) {
  const ModelCase& m = GetParam();
  std::vector<std::string> args = {"run", m.model(), "--threads", "1"};
  for (const std::string& f : m.InputFlags()) args.push_back(f);
  const CliResult fused = RunCli(args);
  ASSERT_EQ(fused.exit_code, 0) << Describe(fused);
  const nlohmann::json info = m.info();
  if (!info.value("negative", false)) {
    EXPECT_NE(fused.out.find("fusions    " + std::to_string(info["expected_fusions"].get<int>()) + " attention"),
              std::string::npos)
        << fused.out;
  }
  args.push_back("--no-fuse");
  const CliResult unfused = RunCli(args);
  ASSERT_EQ(unfused.exit_code, 0) << Describe(unfused);
  EXPECT_NE(unfused.out.find("fusions    0 attention"), std::string::npos) << unfused.out;
  EXPECT_NE(unfused.out.find("[--no-fuse]"), std::string::npos) << unfused.out;
}

INSTANTIATE_TEST_SUITE_P(Models, RunModelTest, ::testing::ValuesIn(AllModels()), TestName);

TEST(RunCommand, OutputFileNamesAreSanitized) {
  // A one-node model whose output name has characters outside [A-Za-z0-9._-].
  onnx::ModelProto model = attune::testing::MinimalModel(17);
  attune::testing::AddInput(model, "x", 1, {int64_t{3}});
  attune::testing::AddOutput(model, "out/y:0", 1, {int64_t{3}});
  attune::testing::AddNode(model, "Neg", {"x"}, {"out/y:0"}, "neg");
  TempDir dir;
  WriteFile(dir / "m.onnx", model.SerializeAsString());
  Tensor x = *Tensor::FromVector<float>({3}, {1.0f, -2.0f, 3.5f});
  ASSERT_TRUE(WriteNpyFile(dir / "x.npy", x).ok());
  const CliResult r = RunCli({"run", dir / "m.onnx", "--input", "x=" + (dir / "x.npy"), "--output-dir", dir / "out"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto y = attune::testing::ReadNpyFloat32(dir / "out/out_y_0.npy");
  EXPECT_EQ(y.values, (std::vector<float>{-1.0f, 2.0f, -3.5f}));
}

TEST(RunCommand, ReadsTensorProtoInputs) {
  const ModelCase m{"mha_causal", attune::testing::SourceDir() + "/models/mha_causal"};
  // The same x as inputs/x.npy, written as an ONNX TensorProto.
  const auto x = attune::testing::ReadNpyFloat32(m.dir + "/inputs/x.npy");
  ASSERT_FALSE(x.values.empty());
  onnx::TensorProto proto;
  proto.set_name("x");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x.shape) proto.add_dims(d);
  proto.set_raw_data(attune::testing::RawBytes(x.values));
  TempDir dir;
  WriteFile(dir / "x.pb", proto.SerializeAsString());
  const CliResult r = RunCli({"run", m.model(), "--input", "x=" + (dir / "x.pb"), "--output-dir", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_LE(MaxAbsDiff(dir / "y.npy", m.dir + "/outputs/y.npy"), 1e-4);
}

}  // namespace
}  // namespace attune::cli_test
