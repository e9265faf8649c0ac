# The CUDA backend (src/cuda, issue 10): built into libkiln when a CUDA toolkit is found, skipped
# otherwise (CI's Debian machine has none), in which case src/cuda/without_toolkit provides kiln::cuda with
# is_available() == false. Included by the top CMakeLists.txt after the kiln target exists.
#
# Only src/cuda's own files see CUDA: its headers and KILN_WITH_CUDA are set on those sources, and
# the runtime libraries are linked by path, so that turning CUDA on or off recompiles nothing
# else. The .cu kernels build as an object library of their own, which keeps the C++ warning
# flags (kiln_set_warnings) and sanitizer flags (add_compile_options) away from nvcc.
find_package(CUDAToolkit QUIET)
# cuDNN is required by the CUDA backend rather than optional within it: its convolutions call it
# (src/cuda/convolution_ops.cpp), and a build without it would need a second, much slower path
# whose use nobody would notice until it mattered. So the backend is on by default only where the
# toolkit and cuDNN both are (a toolkit without cuDNN builds for the CPU, as no toolkit does),
# and KILN_CUDA=ON without cuDNN fails below, saying what to install.
if(CUDAToolkit_FOUND)
  find_library(KILN_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(KILN_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
endif()
# The sanitizer builds leave CUDA out by default: AddressSanitizer's shadow memory and the CUDA
# driver's mappings conflict (protect_shadow_gap), and compute-sanitizer is the device checker.
if(CUDAToolkit_FOUND AND KILN_CUDNN_LIBRARY AND KILN_CUDNN_INCLUDE_DIR AND NOT KILN_SANITIZE
   AND NOT KILN_TSAN)
  set(KILN_CUDA_DEFAULT ON)
else()
  set(KILN_CUDA_DEFAULT OFF)
endif()
option(KILN_CUDA "Build the CUDA backend (needs the CUDA toolkit)" ${KILN_CUDA_DEFAULT})

file(GLOB KILN_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/*.cpp)
file(GLOB KILN_CUDA_KERNEL_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/kernels/*.cu)

set(KILN_NCCL_UNAVAILABLE_SOURCE
    ${PROJECT_SOURCE_DIR}/src/cuda/without_nccl/process_group_nccl_unavailable.cpp)
if(NOT KILN_CUDA)
  message(STATUS "kiln: CUDA backend off (no toolkit found, or KILN_CUDA=OFF)")
  target_sources(kiln PRIVATE ${PROJECT_SOURCE_DIR}/src/cuda/without_toolkit/cuda_unavailable.cpp
                              ${KILN_NCCL_UNAVAILABLE_SOURCE})
  return()
endif()
if(NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR "KILN_CUDA=ON but no CUDA toolkit was found (set CUDAToolkit_ROOT)")
endif()
if(NOT KILN_CUDNN_LIBRARY OR NOT KILN_CUDNN_INCLUDE_DIR)
  message(FATAL_ERROR "KILN_CUDA=ON but cuDNN 9 was not found (libcudnn.so: "
                      "${KILN_CUDNN_LIBRARY}, cudnn.h: ${KILN_CUDNN_INCLUDE_DIR}); install it "
                      "beside the toolkit (${CUDAToolkit_LIBRARY_DIR}), set KILN_CUDNN_LIBRARY "
                      "and KILN_CUDNN_INCLUDE_DIR, or configure with -DKILN_CUDA=OFF")
endif()

if(NOT CMAKE_CUDA_COMPILER)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
# nvcc compiles host code with the project's g++ (the same ABI and libstdc++ as the library).
if(NOT CMAKE_CUDA_HOST_COMPILER AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
endif()
# sm_90 is the H100/H200 of the device machine; sm_80 (A100) costs one more device pass.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90)
endif()
enable_language(CUDA)
# CMake 3.25 does not know nvcc's C++20 flag (nvcc 12 and later have it).
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
message(STATUS "kiln: CUDA backend on (CUDA ${CUDAToolkit_VERSION}, architectures "
               "${CMAKE_CUDA_ARCHITECTURES}, cuDNN ${KILN_CUDNN_LIBRARY})")

add_library(kiln_cuda_kernels OBJECT ${KILN_CUDA_KERNEL_SOURCES})
set_property(TARGET kiln_cuda_kernels PROPERTY COMPILE_OPTIONS "")
set_target_properties(kiln_cuda_kernels PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 20
                                                   CUDA_STANDARD_REQUIRED ON)
target_include_directories(kiln_cuda_kernels PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(kiln_cuda_kernels PRIVATE -Xcompiler=-Wall,-Wextra)
if(KILN_WERROR)
  target_compile_options(kiln_cuda_kernels PRIVATE -Werror=all-warnings)
endif()

set_source_files_properties(${KILN_CUDA_SOURCES} PROPERTIES
  INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS};${KILN_CUDNN_INCLUDE_DIR}"
  COMPILE_DEFINITIONS KILN_WITH_CUDA)
# After every other source: the CUDA registrations fill slots of ops declared there, and a
# shared library runs its static initializers in link order (src/cuda/register.h).
target_sources(kiln PRIVATE ${KILN_CUDA_SOURCES} $<TARGET_OBJECTS:kiln_cuda_kernels>)
target_link_libraries(kiln PRIVATE ${CUDA_cudart_LIBRARY} ${CUDA_cublas_LIBRARY} ${CUDA_nvrtc_LIBRARY}
                                   ${KILN_CUDNN_LIBRARY})

# NCCL (the distributed layer's "nccl" backend, src/cuda/nccl) where the toolkit has its header
# and library; without them the CUDA build runs and ProcessGroupNccl raises, saying what is
# missing.
find_library(KILN_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
find_path(KILN_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(KILN_NCCL_LIBRARY AND KILN_NCCL_INCLUDE_DIR)
  file(GLOB KILN_NCCL_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/nccl/*.cpp)
  # Loaded at run time (src/cuda/nccl/nccl_library.h says why), from the loader's search path
  # or else this library.
  set_source_files_properties(${KILN_NCCL_SOURCES} PROPERTIES
    INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS};${KILN_NCCL_INCLUDE_DIR}"
    COMPILE_DEFINITIONS "KILN_WITH_CUDA;KILN_NCCL_LIBRARY_PATH=\"${KILN_NCCL_LIBRARY}\"")
  target_sources(kiln PRIVATE ${KILN_NCCL_SOURCES})
  message(STATUS "kiln: NCCL backend on (${KILN_NCCL_LIBRARY})")
else()
  message(STATUS "kiln: NCCL not found beside the CUDA toolkit: the nccl backend is off")
  set_source_files_properties(${KILN_NCCL_UNAVAILABLE_SOURCE} PROPERTIES
    COMPILE_DEFINITIONS KILN_WITHOUT_NCCL_ONLY)
  target_sources(kiln PRIVATE ${KILN_NCCL_UNAVAILABLE_SOURCE})
endif()
