# The engine is compiled once into object libraries and linked two ways:
# attune_static for the tools and tests, and the shared libattune.so whose
# only exported symbols are the public API (ATTUNE_API).

file(GLOB_RECURSE ATTUNE_ALL_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/core/*.cc
  ${PROJECT_SOURCE_DIR}/engine/*.cc
  ${PROJECT_SOURCE_DIR}/ops/*.cc
  ${PROJECT_SOURCE_DIR}/importer/*.cc)
set(ATTUNE_AVX2_SOURCES ${ATTUNE_ALL_SOURCES})
list(FILTER ATTUNE_AVX2_SOURCES INCLUDE REGEX "_avx2\\.cc$")
set(ATTUNE_AVX512_SOURCES ${ATTUNE_ALL_SOURCES})
list(FILTER ATTUNE_AVX512_SOURCES INCLUDE REGEX "_avx512\\.cc$")
set(ATTUNE_PORTABLE_SOURCES ${ATTUNE_ALL_SOURCES})
list(FILTER ATTUNE_PORTABLE_SOURCES EXCLUDE REGEX "_(avx2|avx512)\\.cc$")

set(ATTUNE_PUBLIC_DEPS absl::status absl::statusor absl::span)
set(ATTUNE_PRIVATE_DEPS
  onnx_proto protobuf::libprotobuf DNNL::dnnl OpenMP::OpenMP_CXX nlohmann_json::nlohmann_json Threads::Threads
  absl::strings absl::str_format absl::flat_hash_map absl::flat_hash_set absl::span absl::inlined_vector)

function(attune_object_library name)
  add_library(${name} OBJECT ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${name} PUBLIC ONNX_ML=1 ONNX_NAMESPACE=onnx PRIVATE ATTUNE_BUILDING_LIBRARY=1)
  target_compile_options(${name} PRIVATE -fvisibility=hidden -fvisibility-inlines-hidden -Wall -Wextra -Wno-unused-parameter)
  target_link_libraries(${name} PUBLIC ${ATTUNE_PUBLIC_DEPS} ${ATTUNE_PRIVATE_DEPS})
endfunction()

attune_object_library(attune_objs ${ATTUNE_PORTABLE_SOURCES})
# Headers most engine files include, parsed once per build (not for the ISA
# libraries, whose flags differ).
target_precompile_headers(attune_objs PRIVATE
  <algorithm> <cstdint> <functional> <map> <memory> <optional> <string> <vector>
  <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h> <absl/container/flat_hash_map.h>)
set(ATTUNE_OBJECT_LIBS attune_objs)
if(ATTUNE_AVX2_SOURCES)
  attune_object_library(attune_objs_avx2 ${ATTUNE_AVX2_SOURCES})
  target_compile_options(attune_objs_avx2 PRIVATE -mavx2 -mfma -mf16c)
  list(APPEND ATTUNE_OBJECT_LIBS attune_objs_avx2)
endif()
if(ATTUNE_AVX512_SOURCES)
  attune_object_library(attune_objs_avx512 ${ATTUNE_AVX512_SOURCES})
  target_compile_options(attune_objs_avx512 PRIVATE -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c)
  list(APPEND ATTUNE_OBJECT_LIBS attune_objs_avx512)
endif()

set(ATTUNE_OBJECTS)
foreach(lib ${ATTUNE_OBJECT_LIBS})
  list(APPEND ATTUNE_OBJECTS $<TARGET_OBJECTS:${lib}>)
endforeach()

# Static library for the CLI and tests: everything, internal headers included.
add_library(attune_static STATIC ${ATTUNE_OBJECTS})
target_include_directories(attune_static PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(attune_static PUBLIC ONNX_ML=1 ONNX_NAMESPACE=onnx)
target_link_libraries(attune_static PUBLIC ${ATTUNE_PUBLIC_DEPS} ${ATTUNE_PRIVATE_DEPS})

# Shared library for embedders: the same objects, exporting only what ATTUNE_API
# marks (the objects are built with hidden visibility; the version script also
# hides the weak std:: template instances that default visibility would leak).
add_library(attune SHARED ${ATTUNE_OBJECTS})
add_library(attune::attune ALIAS attune)
set_target_properties(attune PROPERTIES
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  EXPORT_NAME attune
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/attune.map)
target_include_directories(attune PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(attune PUBLIC cxx_std_20)
# Private dependencies stay out of the exported package entirely (not even as
# link-dependent libraries naming targets a consumer does not have).
add_library(attune_private_deps INTERFACE)
target_link_libraries(attune_private_deps INTERFACE ${ATTUNE_PRIVATE_DEPS})
target_link_libraries(attune PUBLIC ${ATTUNE_PUBLIC_DEPS} PRIVATE $<BUILD_INTERFACE:attune_private_deps>)
target_link_options(attune PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/attune.map")
if(NOT ATTUNE_SANITIZE AND NOT ATTUNE_TSAN)
  target_link_options(attune PRIVATE "LINKER:--no-undefined")
endif()
