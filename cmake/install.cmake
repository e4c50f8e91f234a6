# What `cmake --install` puts in place: the libraries, the headers, the `tandem` command and its
# manual page, the CMake package (tandemConfig.cmake: tandem::tandem and tandem::blas) and the
# pkg-config files (tandem.pc, tandem-blas.pc). Included by the top-level CMakeLists.txt.
#
# Each rule belongs to one component, and each component is one Debian package
# (cmake/package_deb.cmake): runtime (libtandem.so.0), blas (the drop-in, libtandem_blas.so.0),
# dev (headers, the .so links, the CMake package, the pkg-config files) and cli (the command).
# A plain `cmake --install` installs them all.
include(CMakePackageConfigHelpers)

set(TANDEM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)

# Run paths relative to the installed files themselves, so an installed tree works from any
# prefix, moved or not: the command finds libtandem.so.0 in the library directory, and the
# drop-in finds it beside itself (LD_PRELOAD and update-alternatives use the drop-in alone).
file(RELATIVE_PATH TANDEM_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set_target_properties(tandem_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${TANDEM_BIN_TO_LIB}")
set_target_properties(tandem_blas PROPERTIES INSTALL_RPATH "$ORIGIN")

install(TARGETS tandem EXPORT tandemTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tandem_blas EXPORT tandemTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT blas NAMELINK_COMPONENT dev)
install(TARGETS tandem_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(DIRECTORY include/tandem DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/include/tandem/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tandem COMPONENT dev)

# The manual page, compressed as Debian Policy 12.1 asks (gzip -n: no time stamp, so the same
# page gives the same bytes); uncompressed where there is no gzip.
configure_file(docs/tandem.1.in ${CMAKE_CURRENT_BINARY_DIR}/man/tandem.1 @ONLY)
find_program(TANDEM_GZIP gzip)
set(TANDEM_MAN_PAGE ${CMAKE_CURRENT_BINARY_DIR}/man/tandem.1)
if(TANDEM_GZIP)
  execute_process(COMMAND ${TANDEM_GZIP} -9nc ${TANDEM_MAN_PAGE}
                  OUTPUT_FILE ${TANDEM_MAN_PAGE}.gz COMMAND_ERROR_IS_FATAL ANY)
  string(APPEND TANDEM_MAN_PAGE .gz)
endif()
install(FILES ${TANDEM_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)

install(EXPORT tandemTargets NAMESPACE tandem:: DESTINATION ${TANDEM_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/tandemConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/tandemConfig.cmake
                              INSTALL_DESTINATION ${TANDEM_CMAKE_DIR})
# 0.x: a minor version may change the API (profiles are kept per minor version too).
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tandemConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tandemConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tandemConfigVersion.cmake
        DESTINATION ${TANDEM_CMAKE_DIR} COMPONENT dev)

# The pkg-config files are written when they are installed, with the prefix they are installed
# under (`--prefix`, or /usr when CPack builds the Debian packages), so that under /usr their
# directories are the system's and pkg-config leaves them out of the flags it prints.
# cmake/pkgconfig_install.cmake.in says how; a moved tree is used with
# `pkg-config --define-variable=prefix=NEW`.
configure_file(cmake/pkgconfig_install.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig_install.cmake
               @ONLY)
install(SCRIPT ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig_install.cmake COMPONENT dev)
