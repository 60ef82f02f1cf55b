// The Open Inference Protocol's tensor datatypes ("FP32", "INT64", "BYTES", ...)
// and Attune's element types, both ways.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "attune/element_type.h"

namespace attune::server {

/// The protocol's name of an element type ("FP32"); "" for one it has no name for.
std::string DatatypeName(ElementType type);
/// The element type of a protocol datatype; nullopt for an unknown name.
/// "BYTES" maps to kString, which no Attune tensor holds.
std::optional<ElementType> ParseDatatype(std::string_view name);

}  // namespace attune::server
