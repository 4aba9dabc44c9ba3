#!/bin/sh
# `make install` into a scratch DESTDIR lays out the package, and a C
# program built with `pkg-config --cflags --libs tensorexpr` against it
# (shared library) and with --static compiles and runs a .tx program.
# Prints "N passed, N failed".
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
if make -s install DESTDIR="$T/root" PREFIX=/usr >"$T/log" 2>&1; then ok; else bad "make install"; cat "$T/log"; fi
for f in usr/bin/txc usr/include/tensorexpr.h usr/lib/libtensorexpr.a usr/lib/libtensorexpr.so \
         usr/lib/pkgconfig/tensorexpr.pc usr/share/man/man1/txc.1 usr/share/man/man5/tx.5 \
         usr/share/man/man3/tensorexpr.3; do
    if [ -e "$T/root/$f" ]; then ok; else bad "missing $f"; fi
done
# the Python package, where Debian's python3 finds it for PREFIX=/usr, using
# the installed library (its _libpath names PREFIX's; TENSOREXPR_LIB points
# into DESTDIR here)
PYD="$T/root/usr/lib/python3/dist-packages"
if [ -e "$PYD/tensorexpr/__init__.py" ] && grep -q "'/usr/lib/libtensorexpr.so.0'" "$PYD/tensorexpr/_libpath.py"
then ok; else bad "python package in $PYD"; fi
san_preload=  # under SANITIZE=1 the installed library needs the sanitizers first
[ "${SAN:-0}" = 1 ] && san_preload="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
if (cd "$T" && PYTHONPATH="$PYD" TENSOREXPR_LIB="$T/root/usr/lib/libtensorexpr.so" \
    LD_PRELOAD="$san_preload" ASAN_OPTIONS=detect_leaks=0 \
    ${PYTHON:-/usr/bin/python3} -c "
import numpy as np, tensorexpr as tx
assert tx.__file__.startswith('$PYD'), tx.__file__
a = np.arange(6.0).reshape(2, 3)
assert np.allclose(tx.einsum('ij,kj->ik', a, a), a @ a.T)
print('ok')" 2>"$T/log" | grep -qx ok); then ok; else bad "installed python package"; cat "$T/log"; fi
soname=$(objdump -p "$T/root/usr/lib/libtensorexpr.so" 2>/dev/null | sed -n 's/ *SONAME *//p')
if [ -n "$soname" ] && [ -e "$T/root/usr/lib/$soname" ]; then ok; else bad "soname link ($soname)"; fi
exported=$(nm -D --defined-only "$T/root/usr/lib/libtensorexpr.so" | awk '{print $3}' | grep -v '^tx_' | head -3)
if [ -z "$exported" ]; then ok; else bad "exports beyond tx_*: $exported"; fi
export PKG_CONFIG_SYSROOT_DIR="$T/root" PKG_CONFIG_PATH="$T/root/usr/lib/pkgconfig"
# shellcheck disable=SC2086
if cc -std=c99 $SAN_CFLAGS examples/embed.c $(pkg-config --cflags --libs tensorexpr) -lm -o "$T/dyn" 2>"$T/log" &&
   LD_LIBRARY_PATH="$T/root/usr/lib" "$T/dyn" | tail -1 | grep -qx ok; then ok; else bad "pkg-config shared build"; cat "$T/log"; fi
# shellcheck disable=SC2086
if cc -std=c99 $SAN_CFLAGS examples/embed.c $(pkg-config --cflags tensorexpr) "$T/root/usr/lib/libtensorexpr.a" \
       $(pkg-config --static --libs-only-l tensorexpr | sed 's/-ltensorexpr//') -o "$T/static" 2>"$T/log" &&
   "$T/static" | tail -1 | grep -qx ok; then ok; else bad "pkg-config static build"; cat "$T/log"; fi
if make -s uninstall DESTDIR="$T/root" PREFIX=/usr >/dev/null 2>&1 && [ ! -e "$T/root/usr/bin/txc" ] &&
   [ ! -e "$T/root/usr/lib/libtensorexpr.so" ] && [ ! -e "$PYD/tensorexpr" ]; then ok; else bad "make uninstall"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
