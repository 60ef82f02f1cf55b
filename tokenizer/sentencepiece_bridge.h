// libsentencepiece behind standard types only: its header declares
// absl::string_view as std::string_view, which clashes with Debian's Abseil,
// so sentencepiece_bridge.cc is the one file that includes it and no Abseil.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attune::tok {

class SentencePieceBridge {
 public:
  SentencePieceBridge();
  ~SentencePieceBridge();
  /// Each returns "" on success, else the library's message.
  std::string Load(const std::string& path);
  std::string Encode(std::string_view text, std::vector<int>& ids) const;
  std::string Decode(const std::vector<int>& ids, std::string& text) const;
  int size() const;
  int bos_id() const;
  int eos_id() const;
  /// The piece's id, or -1 when it is not a piece of the model.
  int PieceToId(std::string_view piece) const;
  bool IsControlOrUnknown(int id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attune::tok
