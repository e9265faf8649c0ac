# Each *.kernel.cpp is compiled once per CPU capability with that capability's instruction-set
# flags and KILN_CPU_CAPABILITY set; the library picks the best one the running CPU supports.
set(KILN_CPU_CAPABILITIES DEFAULT AVX2 AVX512)
set(KILN_CPU_FLAGS_DEFAULT "")
set(KILN_CPU_FLAGS_AVX2 "-mavx2;-mfma;-mf16c;-mbmi2")
set(KILN_CPU_FLAGS_AVX512 "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mf16c;-mbmi2;-mprefer-vector-width=512")

# No fused multiply-add contraction behind the code's back: a kernel computes the same values
# whichever capability's build runs (explicit fmadd in Vec is still allowed).
set(KILN_CPU_COMMON_FLAGS "-ffp-contract=off")

function(kiln_add_cpu_kernels target)
  foreach(src ${ARGN})
    foreach(cap ${KILN_CPU_CAPABILITIES})
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${src})
      string(REPLACE ".kernel.cpp" ".${cap}.cpp" out ${rel})
      set(out ${PROJECT_BINARY_DIR}/kernels/${out})
      configure_file(${PROJECT_SOURCE_DIR}/cmake/kernel_wrapper.cpp.in ${out} @ONLY)
      set_source_files_properties(${out} PROPERTIES
        COMPILE_OPTIONS "${KILN_CPU_COMMON_FLAGS};${KILN_CPU_FLAGS_${cap}}"
        COMPILE_DEFINITIONS "KILN_CPU_CAPABILITY=${cap};KILN_CPU_CAPABILITY_${cap}=1"
        OBJECT_DEPENDS ${src})
      target_sources(${target} PRIVATE ${out})
    endforeach()
  endforeach()
endfunction()
