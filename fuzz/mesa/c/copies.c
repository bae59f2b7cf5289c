/*
 * agxfuzz's Mesa bridge: Mesa's parallel copies kept as what they are.
 *
 * agx_ra lowers every parallel copy it makes on the spot, through
 * agx_emit_parallel_copies. The bridge is linked with
 * -Wl,--wrap=agx_emit_parallel_copies, so agx_ra's calls come here: while
 * bridge_record_copies is set (the `ra` pass), the copies are kept as one
 * parallel-copy pseudo-instruction (so the RA checker can read Mesa's
 * allocation with its copies), and the `lower-copies` pass later hands each
 * one to Mesa's real sequentializer, unchanged. The `ra-direct` pass runs
 * agx_ra exactly as Mesa builds it.
 *
 * The pseudo-instruction is an `intl` (an opcode the model never uses) with as
 * many destinations as sources and PCOPY_MARK in imm; the wire calls it
 * `parallel_copy`.
 */

#include "bridge.h"

bool bridge_record_copies = false;

void __real_agx_emit_parallel_copies(agx_builder *b, struct agx_copy *copies,
                                     unsigned n);

bool
bridge_is_pcopy(const agx_instr *I)
{
   return I->op == AGX_OPCODE_INTL && I->nr_dests == I->nr_srcs &&
          I->imm == PCOPY_MARK;
}

void
__wrap_agx_emit_parallel_copies(agx_builder *b, struct agx_copy *copies,
                                unsigned n)
{
   if (!bridge_record_copies) {
      __real_agx_emit_parallel_copies(b, copies, n);
      return;
   }
   unsigned kept = 0;
   for (unsigned i = 0; i < n; ++i) {
      agx_index src = copies[i].src;
      /* Mesa emits nothing for a copy onto itself either */
      if (!(src.type == AGX_INDEX_REGISTER && src.value == copies[i].dest))
         kept++;
   }
   if (kept == 0)
      return;
   agx_instr *I = agx_alloc_instr(b, AGX_OPCODE_INTL, kept, kept);
   I->imm = PCOPY_MARK;
   unsigned k = 0;
   for (unsigned i = 0; i < n; ++i) {
      agx_index src = copies[i].src;
      if (src.type == AGX_INDEX_REGISTER && src.value == copies[i].dest)
         continue;
      I->dest[k] = agx_register(copies[i].dest, src.size);
      I->src[k] = src;
      k++;
   }
   agx_builder_insert(&b->cursor, I);
}

/*
 * agx_ra with its copies kept. agx_ra also lowers the phis (a parallel copy at
 * the end of each predecessor moving the source into the phi's register) and
 * unlinks them; their structs survive in the context, with the registers RA
 * gave them. They are linked back with every register source the phi's own,
 * which is what Mesa's copies make true on each edge: the model's spelling of
 * a phi resolved by edge copies, which the RA checker reads.
 */
struct kept_mov {
   agx_instr *mov, *next; /* next: the instruction after it before RA, or NULL */
   agx_block *block;
};

void
bridge_ra_keeping_copies(agx_context *ctx)
{
   /* agx_ra also unlinks the moves it coalesced (source and destination one
    * register); they are linked back as that self-move, which the RA checker
    * aligns with the input's move, and `lower-copies` drops them as agx_ra does */
   unsigned nmovs = 0, movs_cap = 16;
   struct kept_mov *movs = malloc(movs_cap * sizeof(*movs));
   agx_foreach_block(ctx, block) {
      agx_foreach_instr_in_block(block, I) {
         if (I->op != AGX_OPCODE_MOV)
            continue;
         if (nmovs == movs_cap) {
            movs_cap *= 2;
            movs = realloc(movs, movs_cap * sizeof(*movs));
         }
         agx_instr *next = I == agx_last_instr(block) ? NULL : agx_next_op(I);
         movs[nmovs++] = (struct kept_mov){I, next, block};
      }
   }

   unsigned n = 0, cap = 16;
   agx_instr **phis = malloc(cap * sizeof(*phis));
   agx_block **homes = malloc(cap * sizeof(*homes));
   agx_foreach_block(ctx, block) {
      agx_foreach_phi_in_block(block, phi) {
         if (n == cap) {
            cap *= 2;
            phis = realloc(phis, cap * sizeof(*phis));
            homes = realloc(homes, cap * sizeof(*homes));
         }
         phis[n] = phi;
         homes[n++] = block;
      }
   }

   bridge_record_copies = true;
   agx_ra(ctx);
   bridge_record_copies = false;

   /* Latest first, so a removed move's anchor (a later removed move) is back */
   for (unsigned k = nmovs; k-- > 0;) {
      struct kept_mov *m = &movs[k];
      if (m->mov->link.next != NULL)
         continue; /* still there */
      agx_cursor cursor = m->next ? agx_before_instr(m->next)
                                  : agx_after_block(m->block);
      agx_builder_insert(&cursor, m->mov);
   }
   free(movs);

   for (unsigned k = n; k-- > 0;) {
      agx_instr *phi = phis[k];
      agx_block *block = homes[k];
      assert(phi->dest[0].type == AGX_INDEX_REGISTER && "RA gave the phi a register");
      /* A source RA gave a register now reads the phi's own; a uniform stays as
       * it was (Mesa's copy moved it too, so both readings agree) */
      agx_foreach_src(phi, s) {
         if (phi->src[s].type == AGX_INDEX_REGISTER)
            phi->src[s] = phi->dest[0];
      }
      /* Back where agx_foreach_phi_in_block finds it: first, or after an else */
      agx_instr *first = agx_first_instr(block);
      agx_cursor cursor = agx_before_block(block);
      if (first && (first->op == AGX_OPCODE_ELSE_ICMP ||
                    first->op == AGX_OPCODE_ELSE_FCMP))
         cursor = agx_after_instr(first);
      agx_builder_insert(&cursor, phi);
   }
   free(phis);
   free(homes);
}

/* Mesa's sequentializer on each kept parallel copy; the phis and coalesced
 * moves kept above go, as agx_ra removes them */
void
bridge_lower_copies(agx_context *ctx)
{
   agx_foreach_instr_global_safe(ctx, I) {
      if (I->op == AGX_OPCODE_MOV && I->src[0].type == AGX_INDEX_REGISTER &&
          I->dest[0].type == AGX_INDEX_REGISTER &&
          I->dest[0].size == I->src[0].size &&
          I->src[0].value == I->dest[0].value) {
         agx_remove_instruction(I); /* agx_ra's own rule for a coalesced move */
         continue;
      }
      if (I->op == AGX_OPCODE_PHI) {
         bool trivial = I->dest[0].type == AGX_INDEX_REGISTER;
         agx_foreach_src(I, s)
            trivial &= agx_is_equiv(I->src[s], I->dest[0]);
         if (trivial)
            agx_remove_instruction(I);
         continue;
      }
      if (!bridge_is_pcopy(I))
         continue;
      struct agx_copy *copies = calloc(I->nr_dests, sizeof(struct agx_copy));
      for (unsigned k = 0; k < I->nr_dests; ++k) {
         assert(I->dest[k].type == AGX_INDEX_REGISTER &&
                "parallel copies write registers");
         copies[k] = (struct agx_copy){.dest = I->dest[k].value, .src = I->src[k]};
      }
      agx_builder b = agx_init_builder(ctx, agx_before_instr(I));
      __real_agx_emit_parallel_copies(&b, copies, I->nr_dests);
      agx_remove_instruction(I);
      free(copies);
   }
}
