// Internal to importer/: protobuf parsing with the 2 GB limit instead of the 64 MB default.
#pragma once

#include <string_view>

#include "google/protobuf/message.h"

namespace attune::importer {

/// Parses `bytes` into `message`; false when they are not a complete valid message.
bool ParseProtoWithLargeLimit(std::string_view bytes, google::protobuf::Message* message);

/// The same, streaming from an open file descriptor (no copy of the whole file).
bool ParseProtoFromFileWithLargeLimit(int fd, google::protobuf::Message* message);

}  // namespace attune::importer
