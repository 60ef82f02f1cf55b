// Greedy generation from a decoder export with a KV cache, tokens printed as
// they come: generate DECODE.onnx ID [ID ...]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "attune/attune.h"

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: generate DECODE.onnx ID [ID ...]\n"), 2;
  auto session = attune::Session::Create(argv[1]);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  // Which inputs and outputs are the ids, the logits and each layer's cache.
  auto generator = attune::Generator::Create(**session);
  if (!generator.ok()) return std::fprintf(stderr, "%s\n", generator.status().ToString().c_str()), 2;
  for (const std::string& line : attune::DescribeDecoderSignature((*generator)->decode_signature()))
    std::printf("%s\n", line.c_str());

  std::vector<int64_t> prompt;
  for (int i = 2; i < argc; ++i) prompt.push_back(std::strtoll(argv[i], nullptr, 10));
  attune::GenerationOptions options;
  options.max_new_tokens = 16;
  std::printf("tokens:");
  auto result = (*generator)->Generate({prompt}, options, [](const attune::TokenEvent& event) {
    std::printf(" %lld", static_cast<long long>(event.tokens[0]));
    std::fflush(stdout);
    return true;  // false would stop here
  });
  std::printf("\n");
  if (!result.ok()) return std::fprintf(stderr, "%s\n", result.status().ToString().c_str()), 2;
  std::printf("prefill %.2f ms, per token %.3f ms (median), %.0f tokens/s\n", result->prefill_ms,
              result->token_ms_median, result->tokens_per_s);
}
