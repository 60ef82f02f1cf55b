# tests/server: `attune serve` on loopback, driven by a client written against the
# Open Inference Protocol with Python's standard library and python3-grpcio (pytest). Needs the CLI.
if(TARGET attune_cli)
  add_test(NAME server.pytest
    COMMAND ${ATTUNE_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(server.pytest PROPERTIES LABELS server TIMEOUT 300
    ENVIRONMENT "ATTUNE_CLI=$<TARGET_FILE:attune_cli>;ATTUNE_SOURCE_DIR=${PROJECT_SOURCE_DIR};ATTUNE_GRPC_DESCRIPTOR=${ATTUNE_GRPC_DESCRIPTOR};PYTHONDONTWRITEBYTECODE=1")
endif()
