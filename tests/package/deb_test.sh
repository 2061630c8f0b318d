#!/usr/bin/env bash
# `cpack -G DEB` from the build directory: the package holds the
# binary, the man page, the bash, zsh and fish completions and the JSON
# schemas, and depends on the shared libraries the binary links (from
# dpkg-shlibdeps). Exit 77 (skipped) without dpkg-deb or dpkg-shlibdeps.
set -u
build=$1
if ! command -v dpkg-deb > /dev/null || ! command -v dpkg-shlibdeps > /dev/null; then
  echo "dpkg-dev not installed"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" > "$out/cpack.log" 2>&1 || { cat "$out/cpack.log"; exit 1; }
deb=$(find "$out" -maxdepth 1 -name 'denpex_*.deb' | head -1)
[ -n "$deb" ] || { echo "no .deb written"; cat "$out/cpack.log"; exit 1; }
contents=$(dpkg-deb -c "$deb")
fail=0
for f in ./usr/bin/denpex ./usr/share/man/man1/denpex.1 ./usr/share/bash-completion/completions/denpex \
         ./usr/share/zsh/vendor-completions/_denpex ./usr/share/fish/vendor_completions.d/denpex.fish \
         ./usr/share/denpex/denpex-diagnosis.schema.json ./usr/share/denpex/denpex-signature.schema.json \
         ./usr/share/denpex/denpex-format.schema.json ./usr/share/doc/denpex/LICENSE; do
  grep -q " $f\$" <<< "$contents" || { echo "FAIL: $f is not in the package"; fail=1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
# libc6 always; RE2 and libarchive only where the binary links them shared
# (-DDENPEX_STATIC_DEPS=OFF), and then the package must name them.
needed=$(readelf -d "$build/denpex" 2>/dev/null | grep NEEDED)
for lib in libre2 libarchive libc6; do
  [ "$lib" = libc6 ] || grep -q "\[$lib\." <<< "$needed" || continue
  grep -q "$lib" <<< "$depends" || { echo "FAIL: Depends lacks $lib: $depends"; fail=1; }
done
if command -v lintian > /dev/null; then
  lintian --no-tag-display-limit "$deb" || true # advice, not a gate: printed for the log
fi
[ $fail = 0 ] && echo "package: ok ($(basename "$deb"), $(stat -c %s "$deb") bytes)"
exit $fail
