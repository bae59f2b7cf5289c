/*
 * agxfuzz's Mesa bridge: the register demand Mesa's RA counts, for the demand
 * oracle.
 *
 * agx_calc_register_demand is static in agx_register_allocate.c, so this file
 * compiles that Mesa file once more into this translation unit (from the tree
 * being built, nothing copied), its three public functions renamed so they do
 * not clash with the real ones, and calls it the way agx_ra does. The bound is
 * agx_ra's too: the registers the demand's occupancy allows, aligned down.
 */

#define agx_ra bridge_demand_copy_agx_ra
#define agx_read_registers bridge_demand_copy_agx_read_registers
#define agx_write_registers bridge_demand_copy_agx_write_registers
#include "agx_register_allocate.c"
#undef agx_ra
#undef agx_read_registers
#undef agx_write_registers

void bridge_mesa_demand(agx_context *ctx, unsigned *demand, unsigned *bound);

void
bridge_mesa_demand(agx_context *ctx, unsigned *demand, unsigned *bound)
{
   agx_compute_liveness(ctx);
   uint8_t *ncomps = calloc(ctx->alloc ? ctx->alloc : 1, sizeof(uint8_t));
   unsigned max_ncomps = 1;
   agx_foreach_instr_global(ctx, I) {
      agx_foreach_ssa_dest(I, d) {
         unsigned v = I->dest[d].value;
         ncomps[v] = util_next_power_of_two(
            bridge_demand_copy_agx_write_registers(I, d));
         max_ncomps = MAX2(max_ncomps, ncomps[v]);
      }
   }
   unsigned alignment = MAX2(max_ncomps, 8);
   unsigned counted = agx_calc_register_demand(ctx, ncomps);
   unsigned aligned = ALIGN_POT(counted, alignment);
   /* Mesa counts r0l as live throughout a function with control flow; the
    * model's demand counts values only (docs/mesa.md): report Mesa's count in
    * the model's unit, so the oracle compares what both count. */
   *demand = counted - (ctx->any_cf ? 1 : 0);
   *bound = ROUND_DOWN_TO(
      agx_occupancy_for_register_count(aligned).max_registers, alignment);
   free(ncomps);
}
