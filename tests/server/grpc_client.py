"""A gRPC client of the Open Inference Protocol (inference.GRPCInferenceService) with Debian's
python3-grpcio. The message classes come from the descriptor set that protoc writes from
server/grpc/inference.proto at build time (ATTUNE_GRPC_DESCRIPTOR), so no generated Python stubs are
needed."""
import os

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf import message_factory

DESCRIPTOR = os.environ.get("ATTUNE_GRPC_DESCRIPTOR", "")
RPCS = {"ServerLive": "ServerLive", "ServerReady": "ServerReady", "ModelReady": "ModelReady",
        "ServerMetadata": "ServerMetadata", "ModelMetadata": "ModelMetadata", "ModelInfer": "ModelInfer"}


def load_messages(path=DESCRIPTOR):
    """Message name (without the package) -> class."""
    files = descriptor_pb2.FileDescriptorSet()
    with open(path, "rb") as f:
        files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for proto in files.file:
        pool.Add(proto)
    factory = message_factory.MessageFactory(pool)
    out = {}
    for proto in files.file:
        for m in proto.message_type:
            out[m.name] = factory.GetPrototype(pool.FindMessageTypeByName(f"{proto.package}.{m.name}"))
    return out


class GrpcClient:
    """One channel to the server; each RPC takes and returns messages."""

    def __init__(self, port, messages=None):
        self.messages = messages or load_messages()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}",
                                             options=[("grpc.max_receive_message_length", 64 << 20),
                                                      ("grpc.max_send_message_length", 64 << 20)])
        self.stubs = {}
        for rpc in RPCS:
            response = self.messages[rpc + "Response"]
            self.stubs[rpc] = self.channel.unary_unary(f"/inference.GRPCInferenceService/{rpc}",
                                                       request_serializer=lambda m: m.SerializeToString(),
                                                       response_deserializer=response.FromString)

    def message(self, _type, **fields):
        return self.messages[_type](**fields)

    def call(self, _rpc, _request=None, _timeout=60, **fields):
        if _request is None:
            _request = self.message(_rpc + "Request", **fields)
        return self.stubs[_rpc](_request, timeout=_timeout)

    def raw(self, rpc, payload, timeout=60):
        """Sends bytes as they are (for messages a stock client would never build)."""
        stub = self.channel.unary_unary(f"/inference.GRPCInferenceService/{rpc}",
                                        request_serializer=lambda b: b,
                                        response_deserializer=self.messages[rpc + "Response"].FromString)
        return stub(payload, timeout=timeout)

    def close(self):
        self.channel.close()
