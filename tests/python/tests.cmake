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
# One ctest test per file (python.<file>): as one test the suite took 206 s in a release run on two
# busy cores and, registered last, ran alone at the end while the other core idled. COST (seconds
# measured the same way: models 92, cli 21, session 16, examples 11, threads 6, install 6) makes
# ctest start the long ones first when it has no times of its own yet (a fresh build folder).
set(ATTUNE_PYTEST_COST_models 90)
file(GLOB ATTUNE_PYTEST_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.py)
foreach(f ${ATTUNE_PYTEST_FILES})
  get_filename_component(stem ${f} NAME_WE)
  string(REGEX REPLACE "^test_" "" stem ${stem})
  set(cost 15)
  if(DEFINED ATTUNE_PYTEST_COST_${stem})
    set(cost ${ATTUNE_PYTEST_COST_${stem}})
  endif()
  add_test(NAME python.${stem} COMMAND ${ATTUNE_PYTHON} -m pytest -q -p no:cacheprovider ${f})
  set_tests_properties(python.${stem} PROPERTIES LABELS python TIMEOUT 900 COST ${cost}
    ENVIRONMENT "${ATTUNE_PYTEST_ENV}")
endforeach()
