# CPack's post-build step for the Debian packages (cmake/package_deb.cmake's
# CPACK_POST_BUILD_SCRIPTS): two things CPack 3.25 writes that Debian's own tools would not, and
# that it has no setting for. A package that has either is rebuilt with dpkg-deb without it;
# every other file, the maintainer scripts of ours included, stays as it is.
#
# 1. A postinst and a postrm that run ldconfig, in every package with a library under /usr/lib
#    that brings no script of that name. Debian's libraries run ldconfig through the ldconfig
#    trigger instead (Debian Policy 8.1.1), which libtandem0 and libtandem-blas0 carry (lintian:
#    maintscript-calls-ldconfig). Only scripts that are exactly CPack's text are taken out.
# 2. Depends clauses that another clause implies. dpkg-shlibdeps writes one clause per
#    dependency template a library's symbols file gives, and does not drop one whose
#    alternatives include all of another's: for libOpenCL (ocl-icd's symbols file),
#    "ocl-icd-libopencl1 | libopencl1" and "ocl-icd-libopencl1 | libopencl-1.1-1 | libopencl1",
#    where the first implies the second. Dropping such a clause leaves what dpkg requires the
#    same (what Debian's own OpenCL users, such as libavfilter8, carry: the first clause and the
#    OpenCL 1.2 one).
cmake_policy(VERSION 3.22)
find_program(TANDEM_DPKG_DEB dpkg-deb REQUIRED)
set(generated_postinst "#!/bin/sh\n\nset -e\n\nif [ \"$1\" = \"configure\" ]; then\n\tldconfig\nfi\n")
set(generated_postrm "#!/bin/sh\n\nset -e\n\nif [ \"$1\" = \"remove\" ]; then\n\tldconfig\nfi\n")

# DEPENDS without the clauses that another one implies (and without repeats of a clause).
function(tandem_minimal_depends depends out)
  string(REPLACE "," ";" clauses "${depends}")
  set(kept "")
  list(LENGTH clauses count)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET clauses ${i} clause)
    string(REPLACE "|" ";" alternatives "${clause}")
    list(TRANSFORM alternatives STRIP)
    set(implied FALSE)
    foreach(j RANGE ${last})
      list(GET clauses ${j} other)
      string(REPLACE "|" ";" other_alternatives "${other}")
      list(TRANSFORM other_alternatives STRIP)
      # Implied by OTHER: every alternative of OTHER is one of this clause's. Of two equal
      # clauses the first stays.
      set(subset TRUE)
      foreach(alternative IN LISTS other_alternatives)
        if(NOT alternative IN_LIST alternatives)
          set(subset FALSE)
        endif()
      endforeach()
      list(LENGTH alternatives n)
      list(LENGTH other_alternatives other_n)
      if(NOT j EQUAL i AND subset AND (other_n LESS n OR j LESS i))
        set(implied TRUE)
      endif()
    endforeach()
    if(NOT implied)
      list(JOIN alternatives " | " clause)
      list(APPEND kept "${clause}")
    endif()
  endforeach()
  list(JOIN kept ", " kept)
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT deb MATCHES "\\.deb$")
    continue()
  endif()
  get_filename_component(name "${deb}" NAME)
  set(tree "${deb}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND ${TANDEM_DPKG_DEB} --raw-extract "${deb}" "${tree}"
                  COMMAND_ERROR_IS_FATAL ANY)
  set(changes "")
  foreach(script IN ITEMS postinst postrm)
    if(EXISTS "${tree}/DEBIAN/${script}")
      file(READ "${tree}/DEBIAN/${script}" text)
      if(text STREQUAL "${generated_${script}}")
        file(REMOVE "${tree}/DEBIAN/${script}")
        list(APPEND changes "CPack's ldconfig ${script} taken out (the ldconfig trigger runs it)")
      endif()
    endif()
  endforeach()
  file(READ "${tree}/DEBIAN/control" control)
  if(control MATCHES "\nDepends: ([^\n]*)\n")
    set(depends "${CMAKE_MATCH_1}")
    tandem_minimal_depends("${depends}" minimal)
    if(NOT minimal STREQUAL depends)
      string(REPLACE "\nDepends: ${depends}\n" "\nDepends: ${minimal}\n" control "${control}")
      file(WRITE "${tree}/DEBIAN/control" "${control}")
      list(APPEND changes "Depends: ${minimal}")
    endif()
  endif()
  if(changes)
    # Owner root (--root-owner-group) whoever runs cpack; gzip, as CPack compresses.
    execute_process(COMMAND ${TANDEM_DPKG_DEB} --root-owner-group -Zgzip --build "${tree}" "${deb}"
                    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
    foreach(change IN LISTS changes)
      message(STATUS "${name}: ${change}")
    endforeach()
  endif()
  file(REMOVE_RECURSE "${tree}")
endforeach()
