# `cmake --install`: libattune.so (SONAME libattune.so.0), the public headers,
# the CMake package (attune::attune) and attune.pc.
include(CMakePackageConfigHelpers)

set(ATTUNE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attune)

install(TARGETS attune EXPORT attuneTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/attune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT attuneTargets NAMESPACE attune:: DESTINATION ${ATTUNE_CMAKE_DIR} FILE attuneTargets.cmake)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/attuneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/attuneConfig.cmake INSTALL_DESTINATION ${ATTUNE_CMAKE_DIR})
# 0.x: a new minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attuneConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attuneConfig.cmake ${PROJECT_BINARY_DIR}/attuneConfigVersion.cmake
  DESTINATION ${ATTUNE_CMAKE_DIR})

# attune.pc finds the prefix from its own location, so `cmake --install --prefix` anywhere works.
file(RELATIVE_PATH ATTUNE_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" ATTUNE_PC_TO_PREFIX "${ATTUNE_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/attune.pc.in ${PROJECT_BINARY_DIR}/attune.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/attune.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
