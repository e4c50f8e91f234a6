# Writes the OpenCL sources named in INPUTS into OUTPUT as C++ raw string constants, one
# `tandem::kernels::<name>` per file, so the runtime never reads kernels from disk.
# INPUTS: the files, separated by "|".
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "// Generated from kernels/*.cl by cmake/embed_kernels.cmake; do not edit.\n#pragma once\n\nnamespace tandem::kernels {\n")
foreach(input IN LISTS INPUTS)
  get_filename_component(name "${input}" NAME_WE)
  file(READ "${input}" text)
  string(APPEND body "inline constexpr const char ${name}[] = R\"tandem_cl(${text})tandem_cl\";\n")
endforeach()
string(APPEND body "}  // namespace tandem::kernels\n")
file(WRITE "${OUTPUT}.tmp" "${body}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
