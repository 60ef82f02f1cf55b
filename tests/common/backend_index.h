// The list of ONNX backend node tests with their op types and dtypes, and the
// parameter list of a suite that may find none.
#pragma once

#include <string>
#include <vector>

namespace attune::testing {

struct BackendIndexRow {
  std::string name;                        // e.g. "test_add_bcast"
  std::vector<std::string> op_types;       // distinct top-level op types, in node order
  std::vector<std::string> input_dtypes;   // per graph input: "FLOAT", "INT64", "seq(FLOAT)", "opt(...)"
  std::vector<std::string> output_dtypes;  // per graph output, likewise
};

/// Every test of the data set FindBackendData() chose: read from its INDEX.tsv where it has one,
/// otherwise from the test models themselves. Empty without data.
const std::vector<BackendIndexRow>& BackendIndex();

/// The parameter a parameterised suite is instantiated with when it finds no case,
/// so that it reports a skip with the reason instead of failing uninstantiated.
inline constexpr const char kNoBackendCase[] = "NoBackendCase";
/// `names`, or {kNoBackendCase} when it is empty.
std::vector<std::string> CasesOrPlaceholder(std::vector<std::string> names);
/// Why a suite found no case: the data is missing, or this set has none of them.
std::string NoCaseMessage();

}  // namespace attune::testing

/// First line of a parameterised backend-data test: skips the placeholder case.
#define ATTUNE_SKIP_PLACEHOLDER_CASE(param) \
  if ((param) == ::attune::testing::kNoBackendCase) GTEST_SKIP() << ::attune::testing::NoCaseMessage()
