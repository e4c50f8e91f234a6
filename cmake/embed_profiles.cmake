# Writes the built-in profile database (database/*.json) into OUTPUT as
# tandem::builtin_profiles::all, a list of (name, JSON text) pairs.
file(GLOB inputs "${DIR}/*.json")
list(SORT inputs)
set(body "// Generated from database/*.json by cmake/embed_profiles.cmake; do not edit.\n#pragma once\n\n#include <utility>\n#include <vector>\n\nnamespace tandem::builtin_profiles {\ninline const std::vector<std::pair<const char*, const char*>> all = {\n")
foreach(input IN LISTS inputs)
  get_filename_component(name "${input}" NAME_WE)
  file(READ "${input}" text)
  string(APPEND body "    {\"${name}\", R\"tandem_json(${text})tandem_json\"},\n")
endforeach()
string(APPEND body "};\n}  // namespace tandem::builtin_profiles\n")
file(WRITE "${OUTPUT}.tmp" "${body}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
