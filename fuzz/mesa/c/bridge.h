/*
 * agxfuzz's Mesa bridge: what its C files share (our code, against Mesa's
 * headers; see fuzz/mesa/c/bridge.c for the protocol).
 */
#ifndef AGXFUZZ_MESA_BRIDGE_H
#define AGXFUZZ_MESA_BRIDGE_H

#include <stdio.h>

#include "agx_builder.h"
#include "agx_compiler.h"

agx_context *bridge_read_shader(void *memctx, char **lines, unsigned nlines,
                                const char **error);
void bridge_write_shader(FILE *fp, agx_context *ctx, bool liveness);
/* Runs one pass by its agxfuzz name; false when the name is unknown. */
bool bridge_run_pass(agx_context *ctx, const char *name, bool *liveness);

/* copies.c: parallel copies as a pseudo-instruction (`parallel_copy` on the wire) */
#define PCOPY_MARK 0x70c0u
extern bool bridge_record_copies;
bool bridge_is_pcopy(const agx_instr *I);
void bridge_lower_copies(agx_context *ctx);
void bridge_ra_keeping_copies(agx_context *ctx);

/* demand.c: agx_calc_register_demand as agx_ra calls it, and agx_ra's bound */
void bridge_mesa_demand(agx_context *ctx, unsigned *demand, unsigned *bound);

#endif
