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

/* Mesa's opcode names, sorted once for a binary search (the worker looks one
 * up per instruction) */
static struct opcode_name {
   const char *name;
   int op;
} opcode_names[AGX_NUM_OPCODES];
static unsigned num_opcode_names;

static int
compare_opcode_names(const void *a, const void *b)
{
   return strcmp(((const struct opcode_name *)a)->name,
                 ((const struct opcode_name *)b)->name);
}

static int
opcode_by_name(const char *name)
{
   if (!num_opcode_names) {
      for (unsigned op = 0; op < AGX_NUM_OPCODES; ++op) {
         if (agx_opcodes_info[op].name)
            opcode_names[num_opcode_names++] =
               (struct opcode_name){agx_opcodes_info[op].name, (int)op};
      }
      qsort(opcode_names, num_opcode_names, sizeof(opcode_names[0]),
            compare_opcode_names);
   }
   struct opcode_name key = {name, 0};
   const struct opcode_name *found =
      bsearch(&key, opcode_names, num_opcode_names, sizeof(opcode_names[0]),
              compare_opcode_names);
   return found ? found->op : -1;
}

static bool
takes_target(enum agx_opcode op)
{
   return (agx_opcodes_info[op].immediates & AGX_IMMEDIATE_TARGET) != 0;
}

/* The line form's fields, read by hand (sscanf was most of a request's cost):
 * each skips the spaces before it and must end at a space, a '.' where one
 * follows, or the line's end */
static bool
read_u64(const char **p, unsigned long long *out)
{
   const char *s = *p;
   while (*s == ' ')
      s++;
   if (*s < '0' || *s > '9')
      return false;
   unsigned long long v = 0;
   for (; *s >= '0' && *s <= '9'; ++s) {
      unsigned digit = *s - '0';
      if (v > (~0ull - digit) / 10)
         return false; /* more than 64 bits */
      v = v * 10 + digit;
   }
   *out = v;
   *p = s;
   return true;
}

static bool
read_field_end(const char *s)
{
   return *s == ' ' || *s == 0;
}

static bool
read_unsigned(const char **p, unsigned *out)
{
   unsigned long long v;
   if (!read_u64(p, &v) || v > 0xffffffffull || !read_field_end(*p))
      return false;
   *out = (unsigned)v;
   return true;
}

static bool
read_int(const char **p, int *out)
{
   const char *s = *p;
   while (*s == ' ')
      s++;
   bool negative = *s == '-';
   unsigned long long v;
   s += negative;
   if (!read_u64(&s, &v) || v > 0x7fffffffull || !read_field_end(s))
      return false;
   *out = negative ? -(int)v : (int)v;
   *p = s;
   return true;
}

static bool
read_index(const char **p, agx_index *out)
{
   unsigned long long f[4];
   const char *s = *p;
   for (unsigned k = 0; k < 4; ++k) {
      if (!read_u64(&s, &f[k]) || (k < 3 ? *s++ != '.' : !read_field_end(s)))
         return false;
      if (k < 3 && (*s < '0' || *s > '9'))
         return false;
   }
   unsigned type = f[0], value = f[1], size = f[2], mods = f[3];
   if (f[0] > AGX_INDEX_UNDEF || f[2] > AGX_SIZE_64 || f[1] >= (1u << 22) ||
       f[3] > 3)
      return false;
   *out = (agx_index){
      .type = type,
      .value = value,
      .size = size,
      .abs = mods & 1,
      .neg = (mods >> 1) & 1,
   };
   *p = s;
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
         const char *p = line + 5;
         int index, s0, s1, npreds;
         if (!read_int(&p, &index) || !read_int(&p, &s0) || !read_int(&p, &s1) ||
             !read_int(&p, &npreds) || index < 0 || (unsigned)index >= nblocks ||
             s0 >= (int)nblocks || s1 >= (int)nblocks) {
            *error = "malformed block line";
            return NULL;
         }
         current = blocks[index];
         current->successors[0] = s0 >= 0 ? blocks[s0] : NULL;
         current->successors[1] = s1 >= 0 ? blocks[s1] : NULL;
         for (int k = 0; k < npreds; ++k) {
            int pred;
            if (!read_int(&p, &pred) || pred < 0 || (unsigned)pred >= nblocks) {
               *error = "malformed predecessor list";
               return NULL;
            }
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
         int target;
         const char *p = line + 2, *start;
         while (*p == ' ')
            p++;
         for (start = p; *p && *p != ' '; ++p)
            ;
         bool named = p > start && p - start < (long)sizeof(name);
         if (named) {
            memcpy(name, start, p - start);
            name[p - start] = 0;
         }
         if (!current || !named || !read_unsigned(&p, &nd) ||
             !read_unsigned(&p, &ns) || !read_unsigned(&p, &cond) ||
             !read_unsigned(&p, &inv) || !read_unsigned(&p, &nest) ||
             !read_unsigned(&p, &shift) || !read_unsigned(&p, &sat) ||
             !read_unsigned(&p, &mask) || !read_unsigned(&p, &format) ||
             !read_u64(&p, &imm) || !read_field_end(p) || !read_int(&p, &target) ||
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
         for (unsigned k = 0; k < nd + ns; ++k) {
            agx_index idx;
            if (!read_index(&p, &idx)) {
               *error = "malformed operand";
               return NULL;
            }
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

/* Decimal digits of v, written backwards from `end`; returns the first */
static char *
put_u64(char *end, unsigned long long v)
{
   do {
      *--end = '0' + v % 10;
      v /= 10;
   } while (v);
   return end;
}

/* ` TYPE.VALUE.SIZE.MODS` at p; returns the end */
static char *
put_index(char *p, agx_index idx)
{
   char digits[24], *d;
   *p++ = ' ';
   *p++ = '0' + idx.type; /* types and sizes are single digits */
   *p++ = '.';
   d = put_u64(digits + sizeof(digits), idx.value);
   memcpy(p, d, digits + sizeof(digits) - d);
   p += digits + sizeof(digits) - d;
   *p++ = '.';
   *p++ = '0' + idx.size;
   *p++ = '.';
   *p++ = '0' + ((unsigned)idx.abs | ((unsigned)idx.neg << 1));
   return p;
}

/* ` N` at p, N signed; returns the end */
static char *
put_num(char *p, long long v)
{
   char digits[24], *d = put_u64(digits + sizeof(digits),
                                 v < 0 ? -(unsigned long long)v : (unsigned long long)v);
   *p++ = ' ';
   if (v < 0)
      *p++ = '-';
   memcpy(p, d, digits + sizeof(digits) - d);
   return p + (digits + sizeof(digits) - d);
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
   /* the line is built in one buffer, written at once: the fields, then each
    * index at most 1 + 1 + 1 + 7 + 1 + 1 + 1 + 1 characters */
   char small[1024];
   size_t need = 256 + 16 * ((size_t)I->nr_dests + I->nr_srcs);
   char *line = need <= sizeof(small) ? small : malloc(need), *p = line;
   const char *name =
      bridge_is_pcopy(I) ? "parallel_copy" : agx_opcodes_info[I->op].name;
   size_t n = strlen(name);
   *p++ = 'i';
   *p++ = ' ';
   memcpy(p, name, n);
   p += n;
   p = put_num(p, I->nr_dests);
   p = put_num(p, I->nr_srcs);
   p = put_num(p, I->icond);
   p = put_num(p, I->invert_cond);
   p = put_num(p, I->nest);
   p = put_num(p, I->shift);
   p = put_num(p, I->saturate);
   p = put_num(p, I->mask);
   p = put_num(p, I->format);
   *p++ = ' ';
   char digits[24], *d = put_u64(digits + sizeof(digits), imm);
   memcpy(p, d, digits + sizeof(digits) - d);
   p += digits + sizeof(digits) - d;
   p = put_num(p, target);
   agx_foreach_dest(I, d)
      p = put_index(p, I->dest[d]);
   agx_foreach_src(I, s)
      p = put_index(p, I->src[s]);
   *p++ = '\n';
   fwrite(line, 1, p - line, fp);
   if (line != small)
      free(line);
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
