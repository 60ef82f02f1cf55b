# The shared library as an embedder sees it: the examples built in-tree against
# libattune.so with only include/ on the include path (so a public header that
# reached into engine/ or ops/ fails to compile, and a call to a symbol the
# library does not export fails to link), and the export check on the library.
add_executable(api_example_hello ${PROJECT_SOURCE_DIR}/examples/hello/main.cc)
target_link_libraries(api_example_hello PRIVATE attune)
add_executable(api_example_server ${PROJECT_SOURCE_DIR}/examples/server/main.cc
                                  ${PROJECT_SOURCE_DIR}/examples/server/npy_file.cc)
target_link_libraries(api_example_server PRIVATE attune Threads::Threads)

add_executable(api_example_generate ${PROJECT_SOURCE_DIR}/examples/generate/main.cc)
target_link_libraries(api_example_generate PRIVATE attune)

add_test(NAME api_example_generate
         COMMAND api_example_generate ${PROJECT_SOURCE_DIR}/models/gpt_kvcache/model.onnx 47 68 25)
# PyTorch's greedy tokens for this prompt (models/gpt_kvcache/generate_reference.json).
set_tests_properties(api_example_generate PROPERTIES LABELS api
                     PASS_REGULAR_EXPRESSION "tokens: 51 88 54 41 94 3 43 62 47 14 40 77 86 83 59 89\n")
add_test(NAME api_example_hello
         COMMAND api_example_hello ${PROJECT_SOURCE_DIR}/models/mha_causal/model.onnx)
set_tests_properties(api_example_hello PROPERTIES LABELS api PASS_REGULAR_EXPRESSION "y: float32\\[2, 2, 64\\]")
add_test(NAME api_exported_symbols COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check_exports.sh $<TARGET_FILE:attune>)
set_tests_properties(api_exported_symbols PROPERTIES LABELS api)
