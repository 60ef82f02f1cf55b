# The layering of the source folders (docs/ARCHITECTURE.md): no folder includes
# one above it. The second test proves the check can fail.
add_test(NAME layers.check COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check_layers.sh ${PROJECT_SOURCE_DIR})
add_test(NAME layers.check_fails COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_layers_fails.sh
  ${PROJECT_SOURCE_DIR}/scripts/check_layers.sh)
set_tests_properties(layers.check layers.check_fails PROPERTIES LABELS layers TIMEOUT 300)
