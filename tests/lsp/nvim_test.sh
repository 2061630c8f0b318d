#!/usr/bin/env bash
# Neovim's built-in LSP client opens the bundled sample, and what it reads
# back from `denpex lsp` is compared with tests/lsp/nvim_expected.txt.
#   nvim_test.sh DENPEX TESTDATA
# Exit 77 (skipped) without nvim (apt-get install neovim).
set -u
bin=$(realpath "$1")
testdata=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
command -v nvim > /dev/null || { echo "nvim is not installed: skipped (apt-get install neovim)"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A private home: no user config, no plugins, no shada.
HOME="$out" XDG_CONFIG_HOME="$out/config" XDG_DATA_HOME="$out/data" XDG_STATE_HOME="$out/state" \
  DENPEX_BIN="$bin" DENPEX_LOG="$testdata/sample/train.log" DENPEX_OUT="$out/got.txt" \
  timeout 60 nvim --headless --clean -n -c "luafile $here/nvim_client.lua" > "$out/nvim.log" 2>&1
status=$?
if [ ! -f "$out/got.txt" ]; then
  echo "nvim wrote nothing (status $status):" >&2
  cat "$out/nvim.log" >&2
  exit 1
fi
if ! diff -u "$here/nvim_expected.txt" "$out/got.txt"; then
  echo "the diagnostics Neovim read differ from tests/lsp/nvim_expected.txt" >&2
  exit 1
fi
echo "nvim read $(wc -l < "$out/got.txt") lines from denpex lsp, as expected"
