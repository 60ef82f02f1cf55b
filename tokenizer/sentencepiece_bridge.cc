// SentencePiece tokenizer.model files are refused with one clear line: Debian 12's
// libsentencepiece exports the protobuf internals it was built with, and a process
// that links it beside libprotobuf crashes while registering the ONNX descriptors at
// start-up. A model's tokenizer.json (which every Hugging Face export ships beside
// tokenizer.model) is read instead.
#include "tokenizer/sentencepiece_bridge.h"

namespace attune::tok {

namespace {
constexpr char kUnsupported[] =
    "SentencePiece tokenizer.model files are not supported yet; use the model's tokenizer.json";
}  // namespace

struct SentencePieceBridge::Impl {};

SentencePieceBridge::SentencePieceBridge() : impl_(std::make_unique<Impl>()) {}
SentencePieceBridge::~SentencePieceBridge() = default;

std::string SentencePieceBridge::Load(const std::string& path) { return kUnsupported; }
std::string SentencePieceBridge::Encode(std::string_view text, std::vector<int>& ids) const { return kUnsupported; }
std::string SentencePieceBridge::Decode(const std::vector<int>& ids, std::string& text) const { return kUnsupported; }
int SentencePieceBridge::size() const { return 0; }
int SentencePieceBridge::bos_id() const { return -1; }
int SentencePieceBridge::eos_id() const { return -1; }
int SentencePieceBridge::PieceToId(std::string_view piece) const { return -1; }
bool SentencePieceBridge::IsControlOrUnknown(int id) const { return false; }

}  // namespace attune::tok
