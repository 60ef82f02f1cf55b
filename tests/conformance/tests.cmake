# The ONNX backend conformance runner, fused and unfused.
add_executable(conformance_runner ${CMAKE_CURRENT_LIST_DIR}/conformance_main.cc)
target_link_libraries(conformance_runner PRIVATE attune_test_common)
add_test(NAME conformance.fused COMMAND conformance_runner)
add_test(NAME conformance.unfused COMMAND conformance_runner --no-fuse)
set_tests_properties(conformance.fused conformance.unfused PROPERTIES LABELS conformance TIMEOUT 900
  SKIP_RETURN_CODE 77)
