/*
 * tcc_shim.c — lets the non-PIC libtcc.a of Debian live inside
 * libtensorexpr.so.
 *
 * libtcc.a is built without -fPIC; its references to local symbols are
 * fine once they are hidden in our shared object, but it also reads three
 * glibc data symbols (stdout, stderr, environ) with PC-relative
 * relocations, which a shared object cannot take. The Makefile copies the
 * archive with those references renamed to the hidden variables below,
 * and this constructor points them at the real ones when the library is
 * loaded. Only linked into libtensorexpr.so.
 */
#include <stdio.h>

extern char **environ;

__attribute__((visibility("hidden"))) FILE *txtcc_stdout;
__attribute__((visibility("hidden"))) FILE *txtcc_stderr;
__attribute__((visibility("hidden"))) char **txtcc_environ;

__attribute__((constructor)) static void tcc_shim_init(void)
{
    txtcc_stdout = stdout;
    txtcc_stderr = stderr;
    txtcc_environ = environ;
}
