/*
 * agxfuzz's Mesa bridge: the wire form of one function, read into Mesa's
 * agx_context and printed back from the instruction fields.
 *
 * Our own code, written against Mesa's headers (agx_compiler.h and the
 * generated agx_builder.h / agx_opcodes.h). The Python side does all parsing
 * of the project's text form; this file only reads and writes a line form
 * with numeric fields (fuzz/mesa/wire.py is the other half):
 *
 *   shader NBLOCKS ALLOC
 *   block INDEX SUCC0 SUCC1 NPREDS PRED...        (-1: no successor)
 *   i OP ND NS COND INV NEST SHIFT SAT MASK FORMAT IMM TARGET IDX...
 *
 * where IDX is TYPE.VALUE.SIZE.MODS (MODS bit 0 abs, bit 1 neg) for the ND
 * destinations then the NS sources, IMM the 64-bit immediate union (unused by
 * ops that take a target), TARGET a block index or -1. agx_print is not used:
 * it drops shift, the compare conditions and the format.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

static int
opcode_by_name(const char *name)
{
   for (unsigned op = 0; op < AGX_NUM_OPCODES; ++op) {
      if (agx_opcodes_info[op].name &&
          strcmp(agx_opcodes_info[op].name, name) == 0)
         return op;
   }
   return -1;
}

static bool
takes_target(enum agx_opcode op)
{
   return (agx_opcodes_info[op].immediates & AGX_IMMEDIATE_TARGET) != 0;
}

static bool
read_index(const char *tok, agx_index *out)
{
   unsigned type, value, size, mods;
   if (sscanf(tok, "%u.%u.%u.%u", &type, &value, &size, &mods) != 4)
      return false;
   if (type > AGX_INDEX_UNDEF || size > AGX_SIZE_64 || value >= (1u << 22))
      return false;
   *out = (agx_index){
      .type = type,
      .value = value,
      .size = size,
      .abs = mods & 1,
      .neg = (mods >> 1) & 1,
   };
   return true;
}

/* Reads the shader lines of a request (after its `passes` line). Sets *error
 * to a one-line reason and returns NULL on a malformed request: that is a bug
 * of the Python side, never a Mesa finding. */
agx_context *
bridge_read_shader(void *memctx, char **lines, unsigned nlines,
                   const char **error)
{
   agx_context *ctx = rzalloc(memctx, agx_context);
   list_inithead(&ctx->blocks);
   /* agx_ra reads the stage (a vertex shader reserves r5/r6) */
   ctx->nir = rzalloc(ctx, nir_shader);
   ctx->nir->info.stage = MESA_SHADER_COMPUTE;
   ctx->stage = MESA_SHADER_COMPUTE;

   unsigned nblocks = 0, alloc = 0, l = 0;
   if (nlines < 1 || sscanf(lines[0], "shader %u %u", &nblocks, &alloc) != 2 ||
       nblocks == 0 || nblocks > 100000) {
      *error = "expected `shader NBLOCKS ALLOC`";
      return NULL;
   }
   ctx->alloc = alloc;
   ctx->num_blocks = nblocks;

   agx_block **blocks = rzalloc_array(ctx, agx_block *, nblocks);
   for (unsigned b = 0; b < nblocks; ++b) {
      blocks[b] = rzalloc(ctx, agx_block);
      blocks[b]->index = b;
      list_inithead(&blocks[b]->instructions);
      util_dynarray_init(&blocks[b]->predecessors, blocks[b]);
      list_addtail(&blocks[b]->link, &ctx->blocks);
   }

   agx_block *current = NULL;
   for (l = 1; l < nlines; ++l) {
      char *line = lines[l];
      if (strncmp(line, "block ", 6) == 0) {
         int index, s0, s1, npreds, off = 0, n = 0;
         if (sscanf(line, "block %d %d %d %d%n", &index, &s0, &s1, &npreds,
                    &off) != 4 ||
             index < 0 || (unsigned)index >= nblocks || s0 >= (int)nblocks ||
             s1 >= (int)nblocks) {
            *error = "malformed block line";
            return NULL;
         }
         current = blocks[index];
         current->successors[0] = s0 >= 0 ? blocks[s0] : NULL;
         current->successors[1] = s1 >= 0 ? blocks[s1] : NULL;
         char *p = line + off;
         for (int k = 0; k < npreds; ++k) {
            int pred;
            if (sscanf(p, " %d%n", &pred, &n) != 1 || pred < 0 ||
                (unsigned)pred >= nblocks) {
               *error = "malformed predecessor list";
               return NULL;
            }
            p += n;
            util_dynarray_append(&current->predecessors, agx_block *,
                                 blocks[pred]);
            /* Mesa's invariant (agx_validate): a block with a predecessor
             * at or after it in source order is a loop header */
            if ((unsigned)pred >= (unsigned)index)
               current->loop_header = true;
         }
      } else if (strncmp(line, "i ", 2) == 0) {
         char name[64];
         unsigned nd, ns, cond, inv, nest, shift, sat, mask, format;
         unsigned long long imm;
         int target, off = 0, n = 0;
         if (!current ||
             sscanf(line, "i %63s %u %u %u %u %u %u %u %u %u %llu %d%n", name,
                    &nd, &ns, &cond, &inv, &nest, &shift, &sat, &mask, &format,
                    &imm, &target, &off) != 12 ||
             nd > 255 || ns > 255 || target >= (int)nblocks) {
            *error = "malformed instruction line";
            return NULL;
         }
         bool pcopy = strcmp(name, "parallel_copy") == 0;
         int op = pcopy ? AGX_OPCODE_INTL : opcode_by_name(name);
         if (op < 0) {
            *error = "unknown Mesa opcode";
            return NULL;
         }
         agx_builder b = agx_init_builder(ctx, agx_after_block(current));
         agx_instr *I = agx_alloc_instr(&b, op, nd, ns);
         I->icond = cond;
         I->invert_cond = inv;
         I->nest = nest;
         I->shift = shift;
         I->saturate = sat;
         I->mask = mask;
         I->format = format;
         if (takes_target(op))
            I->target = target >= 0 ? blocks[target] : NULL;
         else
            I->imm = pcopy ? PCOPY_MARK : imm;
         char *p = line + off;
         char tok[64];
         for (unsigned k = 0; k < nd + ns; ++k) {
            agx_index idx;
            if (sscanf(p, " %63s%n", tok, &n) != 1 || !read_index(tok, &idx)) {
               *error = "malformed operand";
               return NULL;
            }
            p += n;
            if (k < nd)
               I->dest[k] = idx;
            else
               I->src[k - nd] = idx;
         }
         agx_builder_insert(&b.cursor, I);
         /* agx_ra keeps r0l out of the allocation under control flow */
         if (op == AGX_OPCODE_BEGIN_CF)
            ctx->any_cf = true;
      } else {
         *error = "unexpected line in shader";
         return NULL;
      }
   }
   return ctx;
}

static void
write_index(FILE *fp, agx_index idx)
{
   fprintf(fp, " %u.%u.%u.%u", idx.type, idx.value, idx.size,
           (unsigned)idx.abs | ((unsigned)idx.neg << 1));
}

static void
write_instr(FILE *fp, const agx_instr *I)
{
   long target = -1;
   unsigned long long imm = 0;
   if (takes_target(I->op))
      target = I->target ? (long)I->target->index : -1;
   else
      imm = I->imm;
   fprintf(fp, "i %s %u %u %u %u %u %u %u %u %u %llu %ld",
           bridge_is_pcopy(I) ? "parallel_copy" : agx_opcodes_info[I->op].name, I->nr_dests, I->nr_srcs,
           (unsigned)I->icond, (unsigned)I->invert_cond, I->nest,
           (unsigned)I->shift, (unsigned)I->saturate, (unsigned)I->mask,
           (unsigned)I->format, imm, target);
   agx_foreach_dest(I, d)
      write_index(fp, I->dest[d]);
   agx_foreach_src(I, s)
      write_index(fp, I->src[s]);
   fputc('\n', fp);
}

static void
write_set(FILE *fp, const char *what, const BITSET_WORD *set, unsigned alloc)
{
   fprintf(fp, " %s", what);
   for (unsigned v = 0; set && v < alloc; ++v) {
      if (BITSET_TEST(set, v))
         fprintf(fp, " %u", v);
   }
}

void
bridge_write_shader(FILE *fp, agx_context *ctx, bool liveness)
{
   unsigned nblocks = 0;
   agx_foreach_block(ctx, block)
      nblocks++;
   fprintf(fp, "shader %u %u %u\n", nblocks, ctx->alloc, ctx->max_reg);
   agx_foreach_block(ctx, block) {
      fprintf(fp, "block %u %d %d %u", block->index,
              block->successors[0] ? (int)block->successors[0]->index : -1,
              block->successors[1] ? (int)block->successors[1]->index : -1,
              agx_num_predecessors(block));
      agx_foreach_predecessor(block, pred)
         fprintf(fp, " %u", (*pred)->index);
      fputc('\n', fp);
      agx_foreach_instr_in_block(block, I)
         write_instr(fp, I);
   }
   if (liveness) {
      agx_foreach_block(ctx, block) {
         fprintf(fp, "live %u", block->index);
         write_set(fp, "in", block->live_in, ctx->alloc);
         write_set(fp, "out", block->live_out, ctx->alloc);
         fputc('\n', fp);
      }
   }
}
