// No Abseil header may come before this one (see sentencepiece_bridge.h); the
// build compiles this file without the precompiled headers.
#include <sentencepiece_processor.h>

#include "tokenizer/sentencepiece_bridge.h"

namespace attune::tok {

struct SentencePieceBridge::Impl {
  sentencepiece::SentencePieceProcessor processor;
};

SentencePieceBridge::SentencePieceBridge() : impl_(std::make_unique<Impl>()) {}
SentencePieceBridge::~SentencePieceBridge() = default;

std::string SentencePieceBridge::Load(const std::string& path) {
  const auto status = impl_->processor.Load(path);
  return status.ok() ? "" : status.ToString();
}

std::string SentencePieceBridge::Encode(std::string_view text, std::vector<int>& ids) const {
  const auto status = impl_->processor.Encode(text, &ids);
  return status.ok() ? "" : status.ToString();
}

std::string SentencePieceBridge::Decode(const std::vector<int>& ids, std::string& text) const {
  const auto status = impl_->processor.Decode(ids, &text);
  return status.ok() ? "" : status.ToString();
}

int SentencePieceBridge::size() const { return impl_->processor.GetPieceSize(); }
int SentencePieceBridge::bos_id() const { return impl_->processor.bos_id(); }
int SentencePieceBridge::eos_id() const { return impl_->processor.eos_id(); }

int SentencePieceBridge::PieceToId(std::string_view piece) const {
  const int id = impl_->processor.PieceToId(piece);
  return id == impl_->processor.unk_id() && impl_->processor.IdToPiece(id) != piece ? -1 : id;
}

bool SentencePieceBridge::IsControlOrUnknown(int id) const {
  return impl_->processor.IsControl(id) || impl_->processor.IsUnknown(id);
}

}  // namespace attune::tok
