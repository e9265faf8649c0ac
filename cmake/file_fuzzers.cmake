# libFuzzer targets for the files kiln reads (tests/file_fuzzers), built in the clang sanitizer
# build only. The readers they reach are compiled with libFuzzer's coverage instrumentation (and
# nothing else is), so that the fuzzer steers into their branches; the ASan runtime provides
# the instrumentation's hooks to every other executable that links libkiln.
if(KILN_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(KILN_FILE_FUZZERS ON)
  set_source_files_properties(
    ${PROJECT_SOURCE_DIR}/src/serialize/safetensors_header.cpp
    ${PROJECT_SOURCE_DIR}/src/serialize/safetensors_load.cpp
    ${PROJECT_SOURCE_DIR}/src/inductor/autotune_winners.cpp
    PROPERTIES COMPILE_OPTIONS -fsanitize=fuzzer-no-link)
else()
  set(KILN_FILE_FUZZERS OFF)
endif()
