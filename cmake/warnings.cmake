function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  # GCC 12 reports -Wrestrict false positives inside libstdc++'s std::string (GCC bug 105329).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(KILN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(KILN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(KILN_TSAN)
  if(KILN_SANITIZE)
    message(FATAL_ERROR "KILN_TSAN and KILN_SANITIZE exclude each other: ThreadSanitizer cannot "
                        "run with AddressSanitizer; use two build folders")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# While op families are developed on separate branches, executables may link against a libkiln
# that lacks another family's functions. Never on in CI or in the README's commands.
option(KILN_DEV_ALLOW_UNDEFINED "Link executables even if libkiln has undefined symbols" OFF)
if(KILN_DEV_ALLOW_UNDEFINED)
  add_link_options(-Wl,--allow-shlib-undefined)
endif()
