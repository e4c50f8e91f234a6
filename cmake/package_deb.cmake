# The Debian package, built by CPack (`cpack -G DEB` in the build directory): everything
# `cmake --install` installs, under /usr, with dependencies from dpkg-shlibdeps, and maintainer
# scripts that register the drop-in BLAS as a libblas.so.3 alternative, as Debian's OpenBLAS
# registers its own. Included by the top-level CMakeLists.txt after install.cmake.
if(NOT CMAKE_LIBRARY_ARCHITECTURE)
  message(STATUS "No multiarch triplet (not Debian?): no Debian package")
  return()
endif()

set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tandem)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "tandem")
set(CPACK_PACKAGE_CONTACT "tandem maintainers <tandem@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "one sgemm/dgemm on the CPU BLAS and OpenCL devices at once, and a drop-in BLAS")
set(CPACK_PACKAGE_DESCRIPTION
    "tandem gives part of each matrix product to an OpenCL device and the rest to OpenBLAS, so
both finish together. The package has the library (C and C++ API, CMake package, pkg-config
files), the tandem command (devices, tune, compare), and libtandem_blas.so, registered as a
libblas.so.3 alternative: programs that use the system's BLAS then run their level-3 calls
through tandem and everything else through OpenBLAS.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)

# The maintainer scripts name the installed drop-in and the alternative the way
# `update-alternatives --display libblas.so.3-<triplet>` shows OpenBLAS's. Above OpenBLAS's
# priority (100), so that in automatic mode the drop-in is the one chosen.
set(TANDEM_BLAS_ALTERNATIVE libblas.so.3-${CMAKE_LIBRARY_ARCHITECTURE})
set(TANDEM_BLAS_LINK /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libblas.so.3)
set(TANDEM_BLAS_INSTALLED
    ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libtandem_blas.so.0)
set(TANDEM_BLAS_PRIORITY 200)
foreach(script postinst prerm)
  configure_file(cmake/deb/${script}.in ${CMAKE_CURRENT_BINARY_DIR}/deb/${script} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                  WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_BINARY_DIR}/deb/postinst ${CMAKE_CURRENT_BINARY_DIR}/deb/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

include(CPack)
