# Schema tests (label `schema`): `denpex diagnose --format json` must match
# schemas/denpex-diagnosis.schema.json and `--format sarif` the official
# SARIF 2.1.0 schema (tests/schemas/sarif-2.1.0.json, OASIS errata01), on the
# sample and on every testdata/cases/*/input. Included from tests/CMakeLists.txt.
#
# `denpex grep --json` must match schemas/denpex-grep.schema.json, line by line.
#
# The data files (signatures/, formats/) must match their own schemas (below).
#
# The validator is tests/schema/validate.py (Debian's python3-jsonschema).
# Tests are skipped (exit 125) when python3 or python3-jsonschema is missing.

find_program(DENPEX_PYTHON3 NAMES python3)

file(GLOB DENPEX_SCHEMA_CASES LIST_DIRECTORIES true CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/testdata/cases/*/input")
list(LENGTH DENPEX_SCHEMA_CASES denpex_schema_case_count)
if(denpex_schema_case_count EQUAL 0)
  message(FATAL_ERROR "SchemaTests: no testdata/cases/*/input found")
endif()
list(PREPEND DENPEX_SCHEMA_CASES "${PROJECT_SOURCE_DIR}/testdata/sample")

# $0 = denpex, $1 = format, $2 = input, $3 = validator, $4 = schema.
# Output goes through a file so that a crash of denpex (exit > 1) is not hidden by the pipe.
set(DENPEX_SCHEMA_SCRIPT [=[
[ -n "$PY" ] || { echo "python3 not found"; exit 125; }
out=$(mktemp) || exit 2
"$0" diagnose --year 2024 --format "$1" "$2" > "$out"
rc=$?
if [ "$rc" -gt 1 ]; then echo "denpex exited $rc"; rm -f "$out"; exit 1; fi
"$PY" "$3" "$4" "$out"
r=$?
rm -f "$out"
exit $r
]=])

foreach(input IN LISTS DENPEX_SCHEMA_CASES)
  get_filename_component(case_dir "${input}" DIRECTORY)
  get_filename_component(case_name "${case_dir}" NAME)
  if(input STREQUAL "${PROJECT_SOURCE_DIR}/testdata/sample")
    set(case_name sample)
  endif()
  foreach(fmt IN ITEMS json sarif)
    if(fmt STREQUAL "json")
      set(schema "${PROJECT_SOURCE_DIR}/schemas/denpex-diagnosis.schema.json")
    else()
      set(schema "${PROJECT_SOURCE_DIR}/tests/schemas/sarif-2.1.0.json")
    endif()
    add_test(NAME schema.${fmt}.${case_name}
             COMMAND sh -c "${DENPEX_SCHEMA_SCRIPT}" $<TARGET_FILE:denpex_cli> ${fmt} "${input}"
                     "${PROJECT_SOURCE_DIR}/tests/schema/validate.py" "${schema}")
    set_tests_properties(schema.${fmt}.${case_name} PROPERTIES LABELS schema SKIP_RETURN_CODE 125
                         ENVIRONMENT "PY=${DENPEX_PYTHON3}")
  endforeach()
endforeach()

# grep --json over every case input, validated record by record.
set(DENPEX_GREP_SCHEMA_SCRIPT [=[
[ -n "$PY" ] || { echo "python3 not found"; exit 125; }
out=$(mktemp) || exit 2
"$0" grep --json "$1" > "$out"
rc=$?
if [ "$rc" -gt 1 ]; then echo "denpex exited $rc"; rm -f "$out"; exit 1; fi
if [ ! -s "$out" ]; then echo "no match: nothing to validate"; rm -f "$out"; exit 0; fi
"$PY" "$2" "$3" "$out" --jsonl
r=$?
rm -f "$out"
exit $r
]=])
foreach(input IN LISTS DENPEX_SCHEMA_CASES)
  get_filename_component(case_dir "${input}" DIRECTORY)
  get_filename_component(case_name "${case_dir}" NAME)
  if(input STREQUAL "${PROJECT_SOURCE_DIR}/testdata/sample")
    set(case_name sample)
  endif()
  add_test(NAME schema.grep.${case_name}
           COMMAND sh -c "${DENPEX_GREP_SCHEMA_SCRIPT}" $<TARGET_FILE:denpex_cli> "${input}"
                   "${PROJECT_SOURCE_DIR}/tests/schema/validate.py" "${PROJECT_SOURCE_DIR}/schemas/denpex-grep.schema.json")
  set_tests_properties(schema.grep.${case_name} PROPERTIES LABELS schema SKIP_RETURN_CODE 125
                       ENVIRONMENT "PY=${DENPEX_PYTHON3}")
endforeach()

# The validator itself must reject a broken document (a validator that
# accepts everything would make the tests above meaningless).
add_test(NAME schema.validator-rejects
         COMMAND sh -c "[ -n \"$PY\" ] || exit 125; printf '{\"version\":\"2.0\",\"runs\":[]}' | \"$PY\" \"$0\" \"$1\" -; r=$?; [ $r -eq 125 ] && exit 125; [ $r -eq 1 ]"
                 "${PROJECT_SOURCE_DIR}/tests/schema/validate.py" "${PROJECT_SOURCE_DIR}/tests/schemas/sarif-2.1.0.json")
set_tests_properties(schema.validator-rejects PROPERTIES LABELS schema SKIP_RETURN_CODE 125
                     ENVIRONMENT "PY=${DENPEX_PYTHON3}")

# The data files (issue 33): every signature entry and every line format
# matches its schema (schemas/denpex-signature.schema.json,
# schemas/denpex-format.schema.json) and opens with a "$schema" key naming it
# relative to the file, which is what an editor follows.
add_test(NAME schema.data.signatures
         COMMAND sh -c "[ -n \"$PY\" ] || { echo 'python3 not found'; exit 125; }; \"$PY\" \"$0\" \"$1\" \"$2\" --schema-ref"
                 "${PROJECT_SOURCE_DIR}/tests/schema/validate.py" "${PROJECT_SOURCE_DIR}/schemas/denpex-signature.schema.json"
                 "${PROJECT_SOURCE_DIR}/signatures")
add_test(NAME schema.data.formats
         COMMAND sh -c "[ -n \"$PY\" ] || { echo 'python3 not found'; exit 125; }; \"$PY\" \"$0\" \"$1\" \"$2\" \"$3\" --schema-ref"
                 "${PROJECT_SOURCE_DIR}/tests/schema/validate.py" "${PROJECT_SOURCE_DIR}/schemas/denpex-format.schema.json"
                 "${PROJECT_SOURCE_DIR}/formats" "${PROJECT_SOURCE_DIR}/testdata/cases/custom-format/formats")
set_tests_properties(schema.data.signatures PROPERTIES LABELS "schema;signatures" SKIP_RETURN_CODE 125
                     ENVIRONMENT "PY=${DENPEX_PYTHON3}")
set_tests_properties(schema.data.formats PROPERTIES LABELS schema SKIP_RETURN_CODE 125
                     ENVIRONMENT "PY=${DENPEX_PYTHON3}")

# Near-misses: a file that is valid but for one thing must fail, and the
# error must name that thing ($4), so that the tests above cannot pass by
# accepting everything.
set(DENPEX_SCHEMA_REJECT_SCRIPT [=[
[ -n "$PY" ] || { echo "python3 not found"; exit 125; }
err=$("$PY" "$0" "$1" "$2" --schema-ref 2>&1)
r=$?
[ "$r" -eq 125 ] && exit 125
printf '%s\n' "$err"
if [ "$r" -ne 1 ]; then echo "expected exit 1 (invalid), got $r"; exit 1; fi
printf '%s' "$err" | grep -qF -- "$3: " || { echo "expected an error at $3"; exit 1; }
]=])
foreach(bad IN ITEMS "bad-signature|signature|/signals/1/anchor" "bad-format|format|/samples/0/fields"
                     "bad-schema-ref|format|/$schema")
  string(REPLACE "|" ";" bad "${bad}")
  list(GET bad 0 file)
  list(GET bad 1 kind)
  list(GET bad 2 pointer)
  add_test(NAME schema.data.rejects-${file}
           COMMAND sh -c "${DENPEX_SCHEMA_REJECT_SCRIPT}" "${PROJECT_SOURCE_DIR}/tests/schema/validate.py"
                   "${PROJECT_SOURCE_DIR}/schemas/denpex-${kind}.schema.json" "${PROJECT_SOURCE_DIR}/tests/schema/${file}.json"
                   "${pointer}")
  set_tests_properties(schema.data.rejects-${file} PROPERTIES LABELS schema SKIP_RETURN_CODE 125
                       ENVIRONMENT "PY=${DENPEX_PYTHON3}")
endforeach()
