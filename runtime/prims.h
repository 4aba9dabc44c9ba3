/*
 * prims.h - how the compiler reaches the inner-loop primitives.
 */
#ifndef TX_PRIMS_H
#define TX_PRIMS_H

typedef struct {
    const char *name;
    const void *addr;
} tx_prim_symbol;

/* Every primitive by name, ended by {0, 0}: jit.c registers them. */
extern const tx_prim_symbol tx_prim_symbols[];
/* Their prototypes as C text, for the JIT flavour of generated code. */
extern const char tx_prim_prototypes[];
/* The text of prims.inc (generated at build time), for standalone code. */
extern const char tx_prims_source[];
/* The same three for the linear-algebra calls (linalg.inc). */
extern const tx_prim_symbol tx_linalg_symbols[];
extern const char tx_linalg_prototypes[];
extern const char tx_linalg_source[];

#endif
