/*
 * prims_isa.h - runtime/prims.inc compiled by tests/prims_isa.c for one
 * code level (the levels the library clones its primitives for), as a
 * table of the PRIM symbols of runtime/symbols.def: check_prims runs the
 * same tests on each table the CPU can run as on the library's own.
 */
#ifndef PRIMS_ISA_H
#define PRIMS_ISA_H

typedef struct {
    const char *name;
    const void *addr;
} prims_isa_entry;

/* x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA), baseline x86-64; each ends
   with a NULL name (empty where the compiler cannot target the level) */
extern const prims_isa_entry prims_isa_v4[], prims_isa_v3[], prims_isa_v1[];

#endif
