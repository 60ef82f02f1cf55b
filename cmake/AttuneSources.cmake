# The engine is compiled once into object libraries and linked two ways:
# attune_static for the tools and tests, and the shared libattune.so whose
# only exported symbols are the public API (ATTUNE_API).

file(GLOB_RECURSE ATTUNE_ALL_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/core/*.cc
  ${PROJECT_SOURCE_DIR}/engine/*.cc
  ${PROJECT_SOURCE_DIR}/ops/*.cc
  ${PROJECT_SOURCE_DIR}/importer/*.cc
  ${PROJECT_SOURCE_DIR}/tokenizer/*.cc)

# ISA sources by file name: <kernel>_avx2.cc gets the AVX2 flags,
# <kernel>_avx512.cc the AVX-512 ones, and <kernel>_avx512<ext>.cc those plus
# -mavx512<ext> (_avx512bf16.cc: -mavx512bf16). Each ISA is an object library
# of its own. Any other library source with "_avx" in its name stops the
# configure, so an ISA file cannot be built without its flags.
set(ATTUNE_AVX2_FLAGS -mavx2 -mfma -mf16c)
set(ATTUNE_AVX512_FLAGS -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c)
set(ATTUNE_PORTABLE_SOURCES)
set(ATTUNE_ISAS)
foreach(src ${ATTUNE_ALL_SOURCES})
  get_filename_component(src_name ${src} NAME)
  if(src_name MATCHES "_(avx2|avx512[a-z0-9]*)\\.cc$")
    list(APPEND ATTUNE_ISAS ${CMAKE_MATCH_1})
    list(APPEND ATTUNE_${CMAKE_MATCH_1}_SOURCES ${src})
  elseif(src_name MATCHES "_avx")
    message(FATAL_ERROR "${src}: an ISA source is named <kernel>_avx2.cc, <kernel>_avx512.cc "
                        "or <kernel>_avx512<ext>.cc (e.g. _avx512bf16.cc), so that it gets its flags")
  else()
    list(APPEND ATTUNE_PORTABLE_SOURCES ${src})
  endif()
endforeach()
list(REMOVE_DUPLICATES ATTUNE_ISAS)

# tokenizer/: PCRE2 (pre-tokenizer regexes), utf8proc (Unicode normalization).
find_package(PkgConfig REQUIRED)
# Linked by path only: their headers are in /usr/include, and a compile flag from
# pkg-config (utf8proc's -DUTF8PROC_EXPORTS) would change every object's command line.
pkg_check_modules(ATTUNE_PCRE2 REQUIRED libpcre2-8)
pkg_check_modules(ATTUNE_UTF8PROC REQUIRED libutf8proc)

set(ATTUNE_PUBLIC_DEPS absl::status absl::statusor absl::span)
set(ATTUNE_PRIVATE_DEPS
  onnx_proto protobuf::libprotobuf DNNL::dnnl OpenMP::OpenMP_CXX nlohmann_json::nlohmann_json Threads::Threads
  absl::strings absl::str_format absl::flat_hash_map absl::flat_hash_set absl::span absl::inlined_vector
  ${ATTUNE_PCRE2_LINK_LIBRARIES} ${ATTUNE_UTF8PROC_LINK_LIBRARIES})

function(attune_object_library name)
  add_library(${name} OBJECT ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${name} PUBLIC ONNX_ML=1 ONNX_NAMESPACE=onnx PRIVATE ATTUNE_BUILDING_LIBRARY=1)
  target_compile_options(${name} PRIVATE -fvisibility=hidden -fvisibility-inlines-hidden -Wall -Wextra -Wno-unused-parameter)
  target_link_libraries(${name} PUBLIC ${ATTUNE_PUBLIC_DEPS} ${ATTUNE_PRIVATE_DEPS})
endfunction()

attune_object_library(attune_objs ${ATTUNE_PORTABLE_SOURCES})
# Headers most engine files include, parsed once per build (not for the ISA
# libraries, whose flags differ). Not under a compiler cache: GCC's .gch differs
# byte for byte each time it is made, and CMake remakes it whenever a source file
# is added, so every object would miss the cache from then on.
if(NOT CMAKE_CXX_COMPILER_LAUNCHER)
  target_precompile_headers(attune_objs PRIVATE
    <algorithm> <cstdint> <functional> <map> <memory> <optional> <string> <vector>
    <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h> <absl/container/flat_hash_map.h>)
endif()
set(ATTUNE_OBJECT_LIBS attune_objs)
foreach(isa ${ATTUNE_ISAS})
  if(isa STREQUAL "avx2")
    set(isa_flags ${ATTUNE_AVX2_FLAGS})
  else()
    string(REGEX REPLACE "^avx512" "" isa_ext ${isa})
    set(isa_flags ${ATTUNE_AVX512_FLAGS})
    if(isa_ext)
      list(APPEND isa_flags -mavx512${isa_ext})
    endif()
  endif()
  attune_object_library(attune_objs_${isa} ${ATTUNE_${isa}_SOURCES})
  target_compile_options(attune_objs_${isa} PRIVATE ${isa_flags})
  list(APPEND ATTUNE_OBJECT_LIBS attune_objs_${isa})
endforeach()

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
