// Model bytes through the public API: Session::CreateFromBytes (import, the
// validator, every pass, compile) with small limits, then one Run on small
// inputs (symbolic dims 2) when the model loads. The corpus holds If, Loop
// and Scan models with subgraphs (tests/controlflow/gen_models.py). Every refusal must obey
// fuzz_check.h; a crash, leak, hang or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "attune/session.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/model_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attune;
  SessionOptions options;
  options.threads = 1;
  options.max_tensor_bytes = int64_t{16} << 20;
  options.max_loop_iterations = 1000;  // a Loop whose trip count and condition never end
  options.log_severity = LogSeverity::kOff;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::CreateFromBytes(bytes, options);
  if (!session.ok()) {
    fuzz::CheckError(session.status(), "CreateFromBytes");
    return 0;
  }
  const std::optional<NamedTensors> inputs =
      fuzz::MakeInputs(**session, [](const std::string&) { return int64_t{2}; }, static_cast<uint32_t>(size));
  if (!inputs) return 0;
  absl::StatusOr<NamedTensors> outputs = (*session)->Run(*inputs);
  if (!outputs.ok()) {
    fuzz::CheckError(outputs.status(), "Run");
    return 0;
  }
  if (outputs->size() != (*session)->outputs().size()) fuzz::Fail("Run returned a different number of outputs");
  return 0;
}
