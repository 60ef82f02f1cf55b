#include "tools/weights_accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"

namespace attune::cli {
namespace {

int64_t SymbolValue(const std::string& symbol) {
  const std::string s = absl::AsciiStrToLower(symbol);
  if (absl::StrContains(s, "batch")) return 1;
  if (absl::StrContains(s, "past")) return 0;
  return 8;
}

// A symbolic dim: a symbol, or a sum of symbols and numbers ("past_sequence_length + 1").
int64_t DimValue(const std::string& symbol) {
  int64_t total = 0;
  for (absl::string_view term : absl::StrSplit(symbol, '+')) {
    const std::string t(absl::StripAsciiWhitespace(term));
    int64_t n;
    total += absl::SimpleAtoi(t, &n) ? n : SymbolValue(t);
  }
  return total;
}

template <typename T>
void FillInteger(Tensor& t, const std::string& name, int64_t limit) {
  const std::string lower = absl::AsciiStrToLower(name);
  const int64_t cols = t.rank() > 0 ? t.shape().back() : 1;
  T* v = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (absl::StrContains(lower, "mask")) v[i] = 1;
    else if (absl::StrContains(lower, "position")) v[i] = static_cast<T>(i % std::max<int64_t>(cols, 1));
    else v[i] = static_cast<T>((i * 7919 + 13) % limit);  // spread over the vocabulary, deterministic
  }
}

absl::Status Fill(Tensor& t, const std::string& name, int64_t limit) {
  switch (t.type()) {
    case ElementType::kInt64: FillInteger<int64_t>(t, name, limit); return absl::OkStatus();
    case ElementType::kInt32: FillInteger<int32_t>(t, name, limit); return absl::OkStatus();
    case ElementType::kBool: for (uint8_t& x : t.values<uint8_t>()) x = 1; return absl::OkStatus();
    case ElementType::kFloat32:
      for (int64_t i = 0; i < t.num_elements(); ++i)
        t.data<float>()[i] = absl::StrContains(absl::AsciiStrToLower(name), "mask") ? 1.0f : std::sin(0.37f * i);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat("cannot generate ", ElementTypeName(t.type()), " input ",
                                                     QuoteName(name), ": give it with --input"));
  }
}

const Tensor* FindOutput(const NamedTensors& outputs, const std::string& name) {
  for (const auto& [n, t] : outputs)
    if (n == name) return &t;
  return nullptr;
}

// The output to compare: "logits" if there is one, else the first float32 output.
std::string ComparedOutput(const NamedTensors& outputs) {
  for (const auto& [n, t] : outputs)
    if (n == "logits" && t.type() == ElementType::kFloat32) return n;
  for (const auto& [n, t] : outputs)
    if (t.type() == ElementType::kFloat32) return n;
  return "";
}

}  // namespace

absl::StatusOr<NamedTensors> ReferenceInputs(const Session& session, const NamedTensors& given) {
  int64_t vocabulary = 16;
  if (!session.outputs().empty() && session.outputs()[0].has_shape && !session.outputs()[0].shape.empty() &&
      session.outputs()[0].shape.back() > 0)
    vocabulary = session.outputs()[0].shape.back();
  NamedTensors inputs;
  for (const TensorInfo& info : session.inputs()) {
    auto it = std::find_if(given.begin(), given.end(), [&](const auto& p) { return p.first == info.name; });
    if (it != given.end()) {
      inputs.push_back(*it);
      continue;
    }
    if (!info.has_shape)
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(info.name), " has no declared shape"));
    std::vector<int64_t> shape;
    for (size_t i = 0; i < info.shape.size(); ++i)
      shape.push_back(info.shape[i] >= 0 ? info.shape[i] : DimValue(info.shape_symbols[i]));
    ASSIGN_OR_RETURN(Tensor t, Tensor::Create(info.type, shape));
    RETURN_IF_ERROR(Fill(t, info.name, vocabulary));
    inputs.emplace_back(info.name, std::move(t));
  }
  return inputs;
}

absl::StatusOr<WeightAccuracy> MeasureWeightAccuracy(const std::string& float_path, const std::string& compressed_path,
                                                     const SessionOptions& options, const NamedTensors& given) {
  SessionOptions float_options = options;
  float_options.weights = WeightCompressionOptions{};
  NamedTensors reference;
  WeightAccuracy accuracy;
  accuracy.input_source = given.empty() ? "generated input" : "given inputs";
  {  // one session at a time: the float one is gone before the compressed one loads
    ASSIGN_OR_RETURN(std::unique_ptr<Session> float_session, Session::Create(float_path, float_options));
    ASSIGN_OR_RETURN(NamedTensors inputs, ReferenceInputs(*float_session, given));
    ASSIGN_OR_RETURN(reference, float_session->Run(inputs));
    float_session.reset();
    ASSIGN_OR_RETURN(std::unique_ptr<Session> compressed, Session::Create(compressed_path, options));
    ASSIGN_OR_RETURN(NamedTensors outputs, compressed->Run(inputs));
    accuracy.output = ComparedOutput(reference);
    if (accuracy.output.empty()) return absl::InvalidArgumentError("the model has no float32 output to compare");
    const Tensor* f = FindOutput(reference, accuracy.output);
    const Tensor* q = FindOutput(outputs, accuracy.output);
    if (q == nullptr || q->shape() != f->shape() || q->type() != f->type())
      return absl::InternalError(absl::StrCat("output ", QuoteName(accuracy.output), " differs in shape"));
    double largest = 0, worst = 0;
    for (int64_t i = 0; i < f->num_elements(); ++i) {
      const double a = f->data<float>()[i], b = q->data<float>()[i];
      largest = std::max(largest, std::fabs(a));
      worst = std::isnan(a - b) ? INFINITY : std::max(worst, std::fabs(a - b));
    }
    accuracy.max_relative_error = largest > 0 ? worst / largest : worst;
    const int64_t cols = f->rank() > 0 ? f->shape().back() : 1;
    accuracy.rows = cols > 0 ? f->num_elements() / cols : 0;
    for (int64_t r = 0; r < accuracy.rows; ++r) {
      const float* fr = f->data<float>() + r * cols;
      const float* qr = q->data<float>() + r * cols;
      accuracy.top1_agree += (std::max_element(fr, fr + cols) - fr) == (std::max_element(qr, qr + cols) - qr);
    }
  }
  return accuracy;
}

std::string FormatWeightAccuracy(const WeightCompressionOptions& weights, const WeightAccuracy& accuracy) {
  const std::string format =
      weights.format == WeightFormat::kBf16
          ? std::string("bf16")
          : absl::StrCat(weights.format == WeightFormat::kInt8 ? "int8" : "int4", " block ", weights.block_size, " ",
                         weights.symmetric ? "symmetric" : "asymmetric");
  return absl::StrFormat(
      "accuracy   %s vs float32 (%s): %s max relative error %.3g, top-1 agreement %d/%d (%.1f%%)",
      format, accuracy.input_source,
      accuracy.output, accuracy.max_relative_error, accuracy.top1_agree, accuracy.rows,
      accuracy.rows > 0 ? 100.0 * accuracy.top1_agree / accuracy.rows : 100.0);
}

void PrintWeightAccuracy(const Args& args, std::FILE* out, const std::string& model_path,
                         const SessionOptions& options, const NamedTensors& given) {
  if (options.weights.format == WeightFormat::kAsIs || args.Has("no-accuracy-report")) return;
  auto accuracy = MeasureWeightAccuracy(model_path, model_path, options, given);
  if (accuracy.ok()) {
    std::fprintf(out, "%s\n", FormatWeightAccuracy(options.weights, *accuracy).c_str());
  } else {
    std::fprintf(out, "accuracy   not measured: %s\n", EscapeControl(std::string(accuracy.status().message())).c_str());
  }
}

}  // namespace attune::cli
