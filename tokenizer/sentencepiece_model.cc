#include "tokenizer/sentencepiece_model.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune::tok {
namespace {

// A message's bytes read one field at a time; every read is checked against the end.
class WireReader {
 public:
  WireReader(std::string_view bytes, std::string_view where) : rest_(bytes), where_(where) {}
  bool done() const { return rest_.empty(); }

  struct Field {
    uint32_t number = 0;
    uint32_t wire_type = 0;
    uint64_t varint = 0;     // wire type 0
    uint32_t fixed32 = 0;    // wire type 5
    std::string_view bytes;  // wire type 2
  };
  absl::StatusOr<Field> Next() {
    Field f;
    ASSIGN_OR_RETURN(const uint64_t key, Varint());
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire_type = static_cast<uint32_t>(key & 7);
    if (f.number == 0 || key >> 32 != 0) return Error("a field number of 0 or beyond 2^29");
    switch (f.wire_type) {
      case 0: {
        ASSIGN_OR_RETURN(f.varint, Varint());
        break;
      }
      case 1: RETURN_IF_ERROR(Take(8).status()); break;
      case 2: {
        ASSIGN_OR_RETURN(const uint64_t length, Varint());
        if (length > rest_.size()) return Error(absl::StrCat("field ", f.number, " runs past the end"));
        ASSIGN_OR_RETURN(f.bytes, Take(static_cast<size_t>(length)));
        break;
      }
      case 5: {
        ASSIGN_OR_RETURN(const std::string_view raw, Take(4));
        f.fixed32 = uint32_t{static_cast<unsigned char>(raw[0])} | uint32_t{static_cast<unsigned char>(raw[1])} << 8 |
                    uint32_t{static_cast<unsigned char>(raw[2])} << 16 | uint32_t{static_cast<unsigned char>(raw[3])} << 24;
        break;
      }
      default: return Error(absl::StrCat("field ", f.number, " has wire type ", f.wire_type, ", which this format never uses"));
    }
    return f;
  }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("not a SentencePiece model: ", Sv(where_), ": ", Sv(what)));
  }

 private:
  absl::StatusOr<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) return Error("truncated");
      const auto byte = static_cast<unsigned char>(rest_[0]);
      rest_.remove_prefix(1);
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Error("a varint longer than 10 bytes");
  }
  absl::StatusOr<std::string_view> Take(size_t n) {
    if (n > rest_.size()) return Error("truncated");
    std::string_view out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return out;
  }

  std::string_view rest_;
  std::string_view where_;
};

float AsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// An int32 field is written as a 64-bit varint (negative ids take 10 bytes).
int32_t AsInt32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

absl::Status ReadPiece(std::string_view bytes, size_t index, SentencePieceModel& model) {
  const std::string where = absl::StrCat("piece ", index);
  WireReader r(bytes, where);
  SentencePieceModel::Piece piece;
  while (!r.done()) {
    ASSIGN_OR_RETURN(const WireReader::Field f, r.Next());
    if (f.number == 1 && f.wire_type == 2) piece.text.assign(f.bytes);
    else if (f.number == 2 && f.wire_type == 5) piece.score = AsFloat(f.fixed32);
    else if (f.number == 3 && f.wire_type == 0) {
      if (f.varint < 1 || f.varint > 6) return r.Error(absl::StrCat("unknown piece type ", f.varint));
      piece.type = static_cast<SentencePieceModel::PieceType>(f.varint);
    }
  }
  if (piece.text.empty()) return r.Error("the piece is empty");
  model.pieces.push_back(std::move(piece));
  return absl::OkStatus();
}

absl::Status ReadTrainerSpec(std::string_view bytes, SentencePieceModel& m) {
  WireReader r(bytes, "trainer_spec");
  while (!r.done()) {
    ASSIGN_OR_RETURN(const WireReader::Field f, r.Next());
    if (f.wire_type == 2 && f.number == 44) m.unk_surface.assign(f.bytes);
    if (f.wire_type != 0) continue;
    switch (f.number) {
      case 3:
        if (f.varint < 1 || f.varint > 4) return r.Error(absl::StrCat("unknown model_type ", f.varint));
        m.model_type = static_cast<SentencePieceModel::ModelType>(f.varint);
        break;
      case 22: m.split_by_whitespace = f.varint != 0; break;
      case 24: m.treat_whitespace_as_suffix = f.varint != 0; break;
      case 35: m.byte_fallback = f.varint != 0; break;
      case 40: m.unk_id = AsInt32(f.varint); break;
      case 41: m.bos_id = AsInt32(f.varint); break;
      case 42: m.eos_id = AsInt32(f.varint); break;
      case 43: m.pad_id = AsInt32(f.varint); break;
      default: break;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadNormalizerSpec(std::string_view bytes, SentencePieceModel& m) {
  WireReader r(bytes, "normalizer_spec");
  while (!r.done()) {
    ASSIGN_OR_RETURN(const WireReader::Field f, r.Next());
    if (f.wire_type == 2 && f.number == 1) m.normalizer_name.assign(f.bytes);
    if (f.wire_type == 2 && f.number == 2) m.precompiled_charsmap.assign(f.bytes);
    if (f.wire_type != 0) continue;
    if (f.number == 3) m.add_dummy_prefix = f.varint != 0;
    if (f.number == 4) m.remove_extra_whitespaces = f.varint != 0;
    if (f.number == 5) m.escape_whitespaces = f.varint != 0;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes) {
  SentencePieceModel model;
  WireReader r(bytes, "ModelProto");
  while (!r.done()) {
    ASSIGN_OR_RETURN(const WireReader::Field f, r.Next());
    if (f.wire_type != 2) continue;
    if (f.number == 1) RETURN_IF_ERROR(ReadPiece(f.bytes, model.pieces.size(), model));
    if (f.number == 2) RETURN_IF_ERROR(ReadTrainerSpec(f.bytes, model));
    if (f.number == 3) RETURN_IF_ERROR(ReadNormalizerSpec(f.bytes, model));
  }
  if (model.pieces.empty()) return r.Error("no pieces");
  const auto size = static_cast<int32_t>(model.pieces.size());
  if (model.unk_id < 0 || model.unk_id >= size ||
      model.pieces[model.unk_id].type != SentencePieceModel::PieceType::kUnknown)
    return r.Error(absl::StrCat("unk_id ", model.unk_id, " is not an UNKNOWN piece"));
  for (const int32_t id : {model.bos_id, model.eos_id, model.pad_id})
    if (id >= size) return r.Error(absl::StrCat("the special id ", id, " is outside the ", size, " pieces"));
  return model;
}

}  // namespace attune::tok
