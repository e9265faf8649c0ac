find_package(OpenMP REQUIRED)
find_package(fmt REQUIRED)
find_path(SLEEF_INCLUDE_DIR sleef.h PATH_SUFFIXES x86_64-linux-gnu REQUIRED)
find_library(SLEEF_LIBRARY sleef REQUIRED)
# OpenBLAS for GEMM (cblas_sgemm/dgemm and openblas_set_num_threads, which generic BLAS lacks).
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# oneDNN for convolutions and float32 GEMM (src/ops/linalg/gemm.cpp says why). Debian's libdnnl-dev
# ships a CMake config; the library runs on OpenMP, so kiln's thread count governs it.
find_package(dnnl CONFIG REQUIRED)
# nlohmann-json (header-only) parses safetensors headers.
find_package(nlohmann_json REQUIRED)
# Gloo runs the collectives of kiln::distributed on CPU tensors. Debian's libgloo-dev ships a CMake
# config (target `gloo`, no namespace) under /usr/share/cmake/Gloo.
find_package(Gloo CONFIG REQUIRED)
if(KILN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(KILN_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
