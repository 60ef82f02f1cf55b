# The documentation's runnable blocks (README.md, docs/*.md; the convention is in
# tests/docs/run_doc_blocks.py and docs/reliability.md), run against the bundled models and this
# build tree. A build without the CLI or the Python module (the sanitizer build) skips them (77).
# The second test proves the check can fail: a page of failing blocks must be reported.
add_test(NAME docs.runnable_blocks
  COMMAND ${ATTUNE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/run_doc_blocks.py ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
add_test(NAME docs.runnable_blocks_fail
  COMMAND ${ATTUNE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/run_doc_blocks.py --expect-failure ${PROJECT_SOURCE_DIR}
          ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR}/fixtures_broken.md)
set_tests_properties(docs.runnable_blocks docs.runnable_blocks_fail PROPERTIES LABELS docs TIMEOUT 900
  SKIP_RETURN_CODE 77)
