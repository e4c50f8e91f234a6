# The Debian packages, built by CPack (`cpack -G DEB` in the build directory), split the way
# Debian splits a library (Debian Policy 8.1-8.4), one package per install component
# (cmake/install.cmake):
#
#   libtandem0       runtime  libtandem.so.0
#   libtandem-blas0  blas     libtandem_blas.so.0, offered as a libblas.so.3 alternative by its
#                             maintainer scripts, as Debian's BLAS implementations offer theirs
#   libtandem-dev    dev      headers, the .so links, the CMake package, the pkg-config files
#   tandem           cli      the command and its manual page: the only one that pulls in PLplot
#                             and libpowercap
#
# Each has its copyright file, changelog.Debian.gz and lintian overrides (cmake/deb/), installed
# only for the package (EXCLUDE_FROM_ALL: `cmake --install` leaves them out). The libraries load
# through the ldconfig trigger (cmake/deb/triggers), not through ldconfig in maintainer scripts.
# ctest's deb builds, lints, installs, uses and removes them (tests/deb_test.sh).
#
# lintian (Debian 12's 2.116) finds no error, and one warning, overridden with its reason in
# cmake/deb/<component>.lintian-overrides: initial-upload-closes-no-bugs, in every package (not
# uploaded to Debian, so no intent-to-package bug to close). Left at its info level: no symbols
# file for the libraries (a C++ library's symbols file is kept by hand, per architecture),
# hardening-no-bindnow and hardening-no-fortify-functions (the packages take the build's flags:
# a build for the archive passes dpkg-buildflags' CFLAGS, CXXFLAGS and LDFLAGS to cmake), and a
# .comment section that CPack's strip keeps where dh_strip would drop it.
# Included by the top-level CMakeLists.txt after install.cmake.
if(NOT CMAKE_LIBRARY_ARCHITECTURE)
  message(STATUS "No multiarch triplet (not Debian?): no Debian package")
  return()
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(STATUS "CMAKE_INSTALL_LIBDIR is absolute (${CMAKE_INSTALL_LIBDIR}): no Debian package")
  return()
endif()

set(TANDEM_DEB_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cmake/deb)
set(TANDEM_DEB_BUILD_DIR ${CMAKE_CURRENT_BINARY_DIR}/deb)

# The version is project(VERSION) with the Debian revision of the newest changelog entry: a new
# upstream version needs a new entry (Debian Policy 4.4), so configuring stops until it has one.
set(TANDEM_DEB_CHANGELOG ${TANDEM_DEB_DIR}/changelog.in)
file(STRINGS ${TANDEM_DEB_CHANGELOG} TANDEM_DEB_TOP REGEX "^tandem \\(" LIMIT_COUNT 1)
if(NOT TANDEM_DEB_TOP MATCHES "^tandem \\(([^)-]+)-([^)]+)\\)")
  message(FATAL_ERROR "${TANDEM_DEB_CHANGELOG}: no 'tandem (VERSION-REVISION)' entry at the top")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "${TANDEM_DEB_CHANGELOG}: the newest entry is for ${CMAKE_MATCH_1}, the "
                      "project is ${PROJECT_VERSION}: add an entry for ${PROJECT_VERSION}")
endif()
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CMAKE_MATCH_2})

# No project address exists yet. .invalid (RFC 2606) can never deliver to a stranger, and
# lintian accepts it where it refused localhost (bogus-mail-host); whoever uploads the packages
# anywhere sets their own: -DTANDEM_DEB_MAINTAINER="Name <address>" (the changelog follows).
set(TANDEM_DEB_MAINTAINER "tandem maintainers <tandem-maintainers@lists.tandem.invalid>"
    CACHE STRING "Maintainer of the Debian packages, as 'Name <address>'")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tandem)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "tandem")
set(CPACK_PACKAGE_CONTACT "${TANDEM_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime blas dev cli)

# Package names from the sonames (Debian Policy 8.1: libtandem.so.0 is libtandem0,
# libtandem_blas.so.0 libtandem-blas0), so a new soname is a new package beside the old one.
get_target_property(TANDEM_SOVERSION tandem SOVERSION)
get_target_property(TANDEM_BLAS_SOVERSION tandem_blas SOVERSION)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libtandem${TANDEM_SOVERSION})
set(CPACK_DEBIAN_BLAS_PACKAGE_NAME libtandem-blas${TANDEM_BLAS_SOVERSION})
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libtandem-dev)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME tandem)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_BLAS_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION math)

# Dependencies: each package's ELF files through dpkg-shlibdeps (OpenCL, OpenBLAS, oneTBB, hwloc
# for the library; PLplot and libpowercap for the command alone), and tandem's own packages at
# exactly this version: libtandem_blas.so.0 and the command call libtandem.so.0's C++ internals,
# which 0.x does not keep stable. The development files need what tandemConfig.cmake and
# tandem-blas.pc ask for: OpenBLAS's pkg-config file and pkg-config itself. The headers include
# nothing of OpenCL's, so no OpenCL development package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libtandem.so.0 as built, for dpkg-shlibdeps to read when it resolves the drop-in and the
# command; it belongs to no installed package, so the dependency on it comes from the
# components' dependencies below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_CURRENT_BINARY_DIR})
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENT_BLAS_DEPENDS runtime)
set(CPACK_COMPONENT_DEV_DEPENDS runtime blas)
set(CPACK_COMPONENT_CLI_DEPENDS runtime)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libopenblas-dev, pkgconf | pkg-config")
# The shlibs files: a program built against libtandem.so.0 needs this very version, as above.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")

# Descriptions: a synopsis under 80 characters, then lines under 80 (lintian's
# extended-description-line-too-long).
set(TANDEM_DEB_ABOUT
    "tandem runs one matrix product (sgemm, dgemm) on the CPU BLAS (OpenBLAS) and
an OpenCL device at the same time, each computing part of C's rows, split by
a profile tuned for the machine.")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "hybrid CPU and OpenCL matrix multiply - runtime library
${TANDEM_DEB_ABOUT}

This package holds the shared library, with its C and C++ API.")
set(CPACK_COMPONENT_BLAS_DESCRIPTION
    "hybrid CPU and OpenCL matrix multiply - drop-in BLAS
${TANDEM_DEB_ABOUT}

This package holds libtandem_blas.so.0, which exports BLAS level 3 (gemm,
syrk, syr2k, symm, trmm, trsm in every precision; hemm, herk, her2k in
complex) and takes every other BLAS and LAPACK call from OpenBLAS. It is
offered as a libblas.so.3 alternative at a priority below every BLAS Debian
ships, so installing it changes nothing until the system's BLAS is set to it
by hand, with the update-alternatives command in its README.Debian.")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "hybrid CPU and OpenCL matrix multiply - development files
${TANDEM_DEB_ABOUT}

This package holds the headers (tandem/tandem.h, C99; tandem/tandem.hpp,
C++17), the CMake package (find_package(tandem): tandem::tandem, tandem::blas)
and the pkg-config files (tandem, tandem-blas).")
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "hybrid CPU and OpenCL matrix multiply - command-line tool
${TANDEM_DEB_ABOUT}

This package holds the tandem command: it lists the OpenCL devices, tunes the
kernel and the CPU/GPU split for this machine and saves the profile that the
library uses, runs checked products, and compares the strategies side by side
with throughput, energy and an SVG plot.")

# The libblas.so.3 alternative, named as `update-alternatives --display
# libblas.so.3-<triplet>` shows Debian's own. Its priority is below every BLAS Debian 12 ships
# (reference 10, ATLAS 35, BLIS 70-80, OpenBLAS 90-100; each package's postinst), the choice
# Debian made for MKL, which users must opt in to (libmkl-rt registers at 1; debian-science,
# 2018): the drop-in is young and sends level 3 to an OpenCL device, so installing it must not
# change what BLAS every program on the system loads.
# In automatic mode it is never chosen (libtandem-blas0 depends on OpenBLAS, which registers at
# 90 or more); `update-alternatives --set` chooses it (README), and removing the package goes
# back to the best of the rest.
set(TANDEM_BLAS_ALTERNATIVE libblas.so.3-${CMAKE_LIBRARY_ARCHITECTURE})
set(TANDEM_BLAS_LINK /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libblas.so.3)
set(TANDEM_BLAS_INSTALLED ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
string(APPEND TANDEM_BLAS_INSTALLED /libtandem_blas.so.${TANDEM_BLAS_SOVERSION})
set(TANDEM_BLAS_PRIORITY 1)

# Upgrades from the single package that came before (tandem 0.1.0: libraries in /usr/lib, the
# drop-in registered at priority 200): libtandem-dev takes over its headers, and the tandem
# package's postinst withdraws the alternative whose file the upgrade removes.
set(TANDEM_DEB_SPLIT_VERSION 0.1.0-1)
set(TANDEM_OLD_BLAS /usr/lib/libtandem_blas.so.0)
set(CPACK_DEBIAN_DEV_PACKAGE_BREAKS "tandem (<< ${TANDEM_DEB_SPLIT_VERSION})")
set(CPACK_DEBIAN_DEV_PACKAGE_REPLACES "tandem (<< ${TANDEM_DEB_SPLIT_VERSION})")

# Maintainer scripts (cmake/deb/COMPONENT.SCRIPT.in) and the ldconfig trigger.
foreach(script blas.postinst blas.prerm cli.postinst)
  string(REPLACE "." "/" path ${script})
  configure_file(${TANDEM_DEB_DIR}/${script}.in ${TANDEM_DEB_BUILD_DIR}/${path} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                  WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_BLAS_PACKAGE_CONTROL_EXTRA
    ${TANDEM_DEB_BUILD_DIR}/blas/postinst ${TANDEM_DEB_BUILD_DIR}/blas/prerm
    ${TANDEM_DEB_DIR}/triggers)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${TANDEM_DEB_DIR}/triggers)
set(CPACK_DEBIAN_CLI_PACKAGE_CONTROL_EXTRA ${TANDEM_DEB_BUILD_DIR}/cli/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
# CPack adds a postinst and a postrm that run ldconfig to any package with a library under
# /usr/lib (Debian runs ldconfig through the trigger above instead), and keeps Depends clauses
# that another one implies; this script takes both out of the built packages.
set(CPACK_POST_BUILD_SCRIPTS ${TANDEM_DEB_DIR}/post_build.cmake)

# Each package's /usr/share/doc/PACKAGE (copyright, changelog.Debian.gz, Debian Policy 12.5 and
# 12.7) and /usr/share/lintian/overrides/PACKAGE.
configure_file(${TANDEM_DEB_CHANGELOG} ${TANDEM_DEB_BUILD_DIR}/changelog.Debian @ONLY)
find_program(TANDEM_GZIP gzip REQUIRED)
execute_process(COMMAND ${TANDEM_GZIP} -9nc ${TANDEM_DEB_BUILD_DIR}/changelog.Debian
                OUTPUT_FILE ${TANDEM_DEB_BUILD_DIR}/changelog.Debian.gz COMMAND_ERROR_IS_FATAL ANY)
# libtandem-blas0's README.Debian: how to make the drop-in the system's BLAS, and undo it.
configure_file(${TANDEM_DEB_DIR}/README.Debian.in ${TANDEM_DEB_BUILD_DIR}/blas/README.Debian @ONLY)
install(FILES ${TANDEM_DEB_BUILD_DIR}/blas/README.Debian
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_BLAS_PACKAGE_NAME}
        COMPONENT blas EXCLUDE_FROM_ALL)
foreach(component IN LISTS CPACK_COMPONENTS_ALL)
  string(TOUPPER ${component} upper)
  set(package ${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
  install(FILES ${TANDEM_DEB_DIR}/copyright ${TANDEM_DEB_BUILD_DIR}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}
          COMPONENT ${component} EXCLUDE_FROM_ALL)
  install(FILES ${TANDEM_DEB_DIR}/${component}.lintian-overrides
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME ${package}
          COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()

include(CPack)
