// The five ways a split treats its delimiters, as tokenizers' NormalizedString::split.
#include <algorithm>
#include <utility>

#include "tokenizer/pre_tokenizer.h"

namespace attune::tok {
namespace {

struct Segment {
  size_t begin, end;
  bool is_match;
};

// The whole text as alternating gaps and matches.
std::vector<Segment> Segments(size_t size, const MatchRanges& matches, bool invert) {
  std::vector<Segment> segments;
  size_t last = 0;
  for (const auto& [begin, end] : matches) {
    if (begin > last) segments.push_back({last, begin, invert});
    segments.push_back({begin, end, !invert});
    last = end;
  }
  if (last < size) segments.push_back({last, size, invert});
  return segments;
}

}  // namespace

void SplitAtMatches(const Piece& piece, const MatchRanges& matches, bool invert, SplitBehavior behavior,
                    std::vector<Piece>& out) {
  std::vector<Segment> segments = Segments(piece.text.size(), matches, invert);
  std::vector<std::pair<size_t, size_t>> parts;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const Segment& s : segments)
        if (!s.is_match) parts.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::kIsolated:
      for (const Segment& s : segments) parts.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const Segment& s : segments) {
        if (s.is_match && !previous_match && !parts.empty())
          parts.back().second = s.end;
        else
          parts.emplace_back(s.begin, s.end);
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
        if (s->is_match && !previous_match && !parts.empty())
          parts.back().first = s->begin;
        else
          parts.emplace_back(s->begin, s->end);
        previous_match = s->is_match;
      }
      std::reverse(parts.begin(), parts.end());
      break;
    case SplitBehavior::kContiguous:
      for (const Segment& s : segments) {
        if (s.is_match == previous_match && !parts.empty())
          parts.back().second = s.end;
        else
          parts.emplace_back(s.begin, s.end);
        previous_match = s.is_match;
      }
      break;
  }
  for (const auto& [begin, end] : parts) {
    if (end > begin) out.push_back({piece.text.substr(begin, end - begin), piece.at_start && begin == 0});
  }
}

}  // namespace attune::tok
