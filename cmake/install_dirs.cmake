# Where `cmake --install` puts things: GNUInstallDirs, except that on Debian and its derivatives
# (CMAKE_LIBRARY_ARCHITECTURE set) libraries go to the multiarch directory lib/<triplet> under
# any prefix, not only under /usr as GNUInstallDirs does by itself. The Debian packages need it
# (Debian Policy 9.1.1), and a tree installed under /usr/local is found there too: the dynamic
# loader, pkg-config and find_package() all search /usr/local/lib/<triplet>. A
# -DCMAKE_INSTALL_LIBDIR given on the command line wins. Included by the top-level
# CMakeLists.txt right after project().
if(CMAKE_LIBRARY_ARCHITECTURE)
  set(_tandem_multiarch_libdir "lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  # A build tree configured before this rule holds GNUInstallDirs' own default, lib, which
  # GNUInstallDirs itself replaces when it was its default (as it does when the prefix changes).
  if(DEFINED CACHE{_GNUInstallDirs_LAST_CMAKE_INSTALL_PREFIX} AND NOT DEFINED
     CACHE{TANDEM_MULTIARCH_LIBDIR} AND "$CACHE{CMAKE_INSTALL_LIBDIR}" STREQUAL "lib")
    unset(CMAKE_INSTALL_LIBDIR CACHE)
  endif()
  if(NOT DEFINED CACHE{CMAKE_INSTALL_LIBDIR})
    set(CMAKE_INSTALL_LIBDIR "${_tandem_multiarch_libdir}"
        CACHE PATH "Object code libraries (${_tandem_multiarch_libdir})")
  endif()
  set(TANDEM_MULTIARCH_LIBDIR "${_tandem_multiarch_libdir}" CACHE INTERNAL
      "lib/<triplet>: cmake/install_dirs.cmake has chosen the library directory")
endif()
include(GNUInstallDirs)
