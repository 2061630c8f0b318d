# Sourced by the golden scripts: read_case_args ARGS_FILE TESTDATA reads a
# case's <variant>.args (one argument per line; {testdata} stands for the
# testdata directory; a line "stdin: FILE" feeds FILE on standard input) into
# the arrays/variables `args` and `stdin`.
read_case_args() {
  args=()
  stdin=/dev/null
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    line=${line//\{testdata\}/$2}
    if [[ $line == stdin:* ]]; then
      stdin=${line#stdin: }
      continue
    fi
    args+=("$line")
  done < "$1"
}
