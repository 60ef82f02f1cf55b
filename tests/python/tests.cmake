# The pytest suite of the Python module, against the build tree's python/ folder. Registered only
# when the module is built (ATTUNE_BUILD_PYTHON, see the top-level CMakeLists.txt); then pytest's
# exit 5 (no tests collected) fails the test like any other non-zero exit.
set(ATTUNE_PYTEST_ENV
  "PYTHONPATH=${PROJECT_BINARY_DIR}/python"
  "ATTUNE_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
  "ATTUNE_BINARY_DIR=${PROJECT_BINARY_DIR}"
  "ATTUNE_CMAKE=${CMAKE_COMMAND}"
  "PYTHONDONTWRITEBYTECODE=1")
if(TARGET attune_cli)
  list(APPEND ATTUNE_PYTEST_ENV "ATTUNE_CLI=$<TARGET_FILE:attune_cli>")
endif()
add_test(NAME python.pytest
  COMMAND ${ATTUNE_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(python.pytest PROPERTIES LABELS python TIMEOUT 900
  ENVIRONMENT "${ATTUNE_PYTEST_ENV}")
