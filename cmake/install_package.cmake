# install_package.cmake — installs the CMake package (find_package(locus CONFIG)) with the
# wheel: <site-packages>/locus/cmake/locusConfig.cmake, headers in <site-packages>/locus/include.
# Included by the top-level CMakeLists when scikit-build-core builds the wheel.
include(CMakePackageConfigHelpers)

set(LOCUS_INSTALL_INCLUDEDIR include)
set(LOCUS_INSTALL_CMAKEDIR cmake)  # `python -m locus._cmake --cmake-dir` prints it

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/locusConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/locusConfig.cmake"
  INSTALL_DESTINATION "${LOCUS_INSTALL_CMAKEDIR}"
  PATH_VARS LOCUS_INSTALL_INCLUDEDIR)
# The C API table is versioned separately (LOCUS_NATIVE_API_VERSION); the headers follow
# the package version, and a wheel is tied to one CPython minor version anyway.
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/locusConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/locusConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/locusConfigVersion.cmake"
        DESTINATION "${LOCUS_INSTALL_CMAKEDIR}")
