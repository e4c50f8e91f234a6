# What `cmake --install` puts in place: the libraries, the headers, the `tandem` command, the
# CMake package (tandemConfig.cmake: tandem::tandem and tandem::blas) and the pkg-config files
# (tandem.pc, tandem-blas.pc). Included by the top-level CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(TANDEM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)

# Run paths relative to the installed files themselves, so an installed tree works from any
# prefix, moved or not: the command finds libtandem.so.0 in the library directory, and the
# drop-in finds it beside itself (LD_PRELOAD and update-alternatives use the drop-in alone).
file(RELATIVE_PATH TANDEM_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set_target_properties(tandem_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${TANDEM_BIN_TO_LIB}")
set_target_properties(tandem_blas PROPERTIES INSTALL_RPATH "$ORIGIN")

install(TARGETS tandem tandem_blas EXPORT tandemTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tandem_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/tandem DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/include/tandem/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tandem)

install(EXPORT tandemTargets NAMESPACE tandem:: DESTINATION ${TANDEM_CMAKE_DIR})
configure_package_config_file(cmake/tandemConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/tandemConfig.cmake
                              INSTALL_DESTINATION ${TANDEM_CMAKE_DIR})
# 0.x: a minor version may change the API (profiles are kept per minor version too).
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tandemConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tandemConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tandemConfigVersion.cmake
        DESTINATION ${TANDEM_CMAKE_DIR})

file(RELATIVE_PATH TANDEM_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TANDEM_PC_TO_PREFIX "${TANDEM_PC_TO_PREFIX}")
foreach(pc tandem tandem-blas)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
