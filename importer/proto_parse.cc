#include "importer/proto_parse.h"

#include <climits>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace attune::importer {
namespace {

bool ParseFromStream(google::protobuf::io::ZeroCopyInputStream* stream, google::protobuf::Message* message) {
  google::protobuf::io::CodedInputStream coded(stream);
  coded.SetTotalBytesLimit(INT_MAX);
  return message->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

}  // namespace

bool ParseProtoWithLargeLimit(std::string_view bytes, google::protobuf::Message* message) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  return ParseFromStream(&stream, message);
}

bool ParseProtoFromFileWithLargeLimit(int fd, google::protobuf::Message* message) {
  google::protobuf::io::FileInputStream stream(fd);
  return ParseFromStream(&stream, message) && stream.GetErrno() == 0;
}

}  // namespace attune::importer
