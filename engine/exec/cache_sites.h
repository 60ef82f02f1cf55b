// Where a KV cache may be kept in one appended buffer: the fused attention
// node that reads a past graph input, and the one that produces a present
// graph output. Found once when a plan is compiled; a past and a present may
// share a buffer when both name the same node and the same cache tensor
// (key or value).
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace attune {

/// The fused attention node and its past input (kInputPastKey/Value) or
/// present output (kOutputPresentKey/Value) index, or why there is none.
struct CacheSite {
  const Node* node = nullptr;
  int port = -1;
  std::string why_not;  // set when node is null
};

/// A past graph input may be read in place from an appended buffer when it is
/// float32 and is read only by one fused attention node (its past_key or
/// past_value) and by shape-only consumers (Shape, Size): nothing else reads
/// its data, which then lies `capacity` rows apart per head.
CacheSite FindPastSite(const Value& past);
/// A present graph output may be appended in place when a fused attention
/// node produces it (present_key or present_value), directly or through
/// Identity nodes, and nothing but that chain reads it: the executor then
/// holds the whole buffer under its name, which no other node could read.
CacheSite FindPresentSite(const Value& present);

}  // namespace attune
