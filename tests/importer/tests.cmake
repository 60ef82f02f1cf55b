# op_arity_schema_test.cc compares Attune's arity table with ONNX's schemas,
# which live in libonnx (the engine itself links only the protobuf classes).
target_link_libraries(test_importer PRIVATE onnx)
