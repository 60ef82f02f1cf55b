# tests/controlflow: the gtest binary test_controlflow also runs the built
# attune binary on the hostile models; tell it where that is and build it first.
if(TARGET test_controlflow AND TARGET attune_cli)
  target_compile_definitions(test_controlflow PRIVATE ATTUNE_CLI_PATH="$<TARGET_FILE:attune_cli>")
  add_dependencies(test_controlflow attune_cli)
  target_link_libraries(test_controlflow PRIVATE nlohmann_json::nlohmann_json)
endif()
