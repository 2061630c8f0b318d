#!/usr/bin/env bash
# The catalog embedded in the binary must be exactly the source tree's
# signatures/ (a stale build, or a file the glob missed, would differ).
set -euo pipefail
bin=$1
dir=$2
diff -u <("$bin" signatures export --format ids --no-builtin --signatures "$dir" | sort) \
        <("$bin" signatures export --format ids | sort)
