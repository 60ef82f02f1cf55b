# fuzz/: libFuzzer targets, each one file defining LLVMFuzzerTestOneInput.
#
# With ATTUNE_FUZZ (clang, scripts/fuzz.sh) each becomes a libFuzzer program
# fuzz_<target>. In every other build with tests each is linked with
# replay_main.cc into fuzz_replay_<target>, and ctest replays the committed
# corpus and every saved crash through it (label fuzz), so the sanitizer build
# in CI keeps the findings fixed without needing clang.
set(ATTUNE_FUZZ_TARGETS model_import model_differential npy tensor_proto infer_request grpc_request tokenizer)

foreach(target ${ATTUNE_FUZZ_TARGETS})
  if(target MATCHES "^(infer|grpc)_request$" AND NOT TARGET attune_server)
    continue()  # server/ is built with the tools
  endif()
  set(src ${PROJECT_SOURCE_DIR}/fuzz/${target}_fuzz.cc)
  if(target STREQUAL "model_differential")
    list(APPEND src ${PROJECT_SOURCE_DIR}/fuzz/graph_mutator.cc)
  endif()
  if(ATTUNE_FUZZ)
    add_executable(fuzz_${target} ${src})
    target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer)
    set(exe fuzz_${target})
  elseif(ATTUNE_BUILD_TESTS)
    add_executable(fuzz_replay_${target} ${src} ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
    set(exe fuzz_replay_${target})
    add_test(NAME fuzz_replay.${target}
             COMMAND ${exe} ${PROJECT_SOURCE_DIR}/fuzz/corpus/${target} ${PROJECT_SOURCE_DIR}/fuzz/crashes/${target})
    set_tests_properties(fuzz_replay.${target} PROPERTIES LABELS fuzz TIMEOUT 300)
  else()
    continue()
  endif()
  if(target MATCHES "^(infer|grpc)_request$")
    target_link_libraries(${exe} PRIVATE attune_server)  # the server's request parsers
  endif()
  target_link_libraries(${exe} PRIVATE attune_static)
  target_compile_definitions(${exe} PRIVATE ATTUNE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endforeach()
