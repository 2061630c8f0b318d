#!/bin/sh
# Stands in for python3 where it is not installed (tests/CMakeLists.txt):
# the test that needed it reports a skip (exit 77) instead of vanishing.
echo "python3 is not installed: skipped (apt-get install python3)" >&2
exit 77
