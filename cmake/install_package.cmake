# install_package.cmake — installs the CMake package (find_package(callsite CONFIG)) with the
# wheel: <site-packages>/callsite/cmake/callsiteConfig.cmake, headers in <site-packages>/callsite/include.
# Included by the top-level CMakeLists when scikit-build-core builds the wheel.
include(CMakePackageConfigHelpers)

set(CALLSITE_INSTALL_INCLUDEDIR include)
set(CALLSITE_INSTALL_CMAKEDIR cmake)  # `python -m callsite --cmake-dir` prints it

# The ABI version is written once, in include/callsite/abi.h.
foreach(_part MAJOR MINOR)
  file(STRINGS "${PROJECT_SOURCE_DIR}/include/callsite/abi.h" _abi_line
       REGEX "^#define CALLSITE_ABI_${_part} ")
  string(REGEX MATCH "[0-9]+$" CALLSITE_ABI_${_part} "${_abi_line}")
endforeach()
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/callsiteConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/callsiteConfig.cmake"
  INSTALL_DESTINATION "${CALLSITE_INSTALL_CMAKEDIR}"
  PATH_VARS CALLSITE_INSTALL_INCLUDEDIR)
# The C API table is versioned separately (CALLSITE_ABI_MAJOR/MINOR); the headers follow
# the package version, and a wheel is tied to one CPython minor version anyway.
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/callsiteConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/callsiteConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/callsiteConfigVersion.cmake"
        DESTINATION "${CALLSITE_INSTALL_CMAKEDIR}")
