"""A finding as a Mesa unit test: `agxfuzz mesa test FINDING` prints the reduced reproducer as
a gtest case in the style of Mesa's `src/asahi/compiler/test/` (a `TEST_F` that builds the
input with `agx_builder`, runs the Mesa pass and checks the property that failed), and
`compile_and_run` builds such a case against a Mesa tree with Mesa's bundled gtest.

The input is the program the failing Mesa pass was given (the reproducer through the
pipeline's earlier steps), spelled as builder calls from its wire form (`fuzz/mesa/wire.py`,
the same numbering the bridge uses). The property, by the finding's oracle:

- `liveness`/`crash` of `mesa:liveness`: `agx_compute_liveness`'s live-out sets, and its
  live-in sets less the block's phis, against the reference liveness (`EXPECT` per block);
- `crash`: the pass runs (and `agx_validate` after a pre-RA pass): Mesa's assert fails it;
- anything else (refinement, verifier, the RA checker, demand): the pass's output equals the
  expected instruction sequence, which is clean Mesa's output (the bridge built from the
  tree without a planted patch) when it differs from the finding's bridge's; when they are
  alike (a bug in Mesa itself) a pre-RA pass is expected to leave the reduced input as it
  is (NEGCASE), and for agx_ra there is nothing to expect: `GtestError`, one line.

`mesa:ra` and `mesa:lower-copies` findings run `agx_ra` (which lowers its copies with
`agx_emit_parallel_copies` inside) on the input of `mesa:ra`. Builds are cached under the
bridge's cache directory: Mesa's gtest once, the Mesa files per tree and patch set.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agxir.ir import EXEC, MACHINE
from agxir.text import parse_function
from fuzz.commands.errors import UsageError
from fuzz.mesa import build, variants
from fuzz.mesa.build import (
    MesaBuildError,
    build_bridge,
    cache_root,
    check_tree,
    default_mesa_src,
    first_error,
)
from fuzz.mesa.client import BridgeClient
from fuzz.mesa.passes import MESA_PASSES, PREFIX
from fuzz.mesa.wire import encode
from fuzz.passes_under_test import registered
from oracles.liveness_reference import reference_liveness

# bridge pass -> the Mesa call a test makes
CALLS = {
    "optimizer": "agx_optimizer(ctx);", "cse": "agx_opt_cse(ctx);",
    "dce": "agx_dce(ctx, true);", "dce-instructions": "agx_dce(ctx, false);",
    "lower-uniform-sources": "agx_lower_uniform_sources(ctx);",
    "schedule": "agx_pressure_schedule(ctx);", "ra-direct": "agx_ra(ctx);",
    "lower-pseudo": "agx_lower_pseudo(ctx);", "liveness": "agx_compute_liveness(ctx);",
}  # fmt: skip
IMM_UNION = {"imm", "writeout", "truth_table", "component", "channels", "bfi_mask",
             "pixel_offset", "zs", "sr", "round", "atomic_opc", "lod_mode"}
WIRE_FIELDS = ("cond", "inv", "nest", "shift", "sat", "mask", "format", "imm", "target")
FIELD_FOR_IMM = {"icond": "cond", "fcond": "cond", "invert_cond": "inv", "nest": "nest",
                 "shift": "shift", "mask": "mask", "format": "format", "target": "target"}
SIZES = {0: "AGX_SIZE_16", 1: "AGX_SIZE_32", 2: "AGX_SIZE_64"}


class GtestError(Exception):
    """One line: why no test (or no build of it) could be made."""


@dataclass
class FindingCase:
    program: str
    pipeline: list[str]
    pass_name: str
    oracle: str
    message: str
    stem: str


def load_finding(path: str | Path) -> FindingCase:
    """A finding's `.json` record or its `.agx` reproducer (header comments)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise GtestError(f"agxfuzz: cannot read {path}: {error.strerror}") from None
    if path.suffix == ".json":
        try:
            record = json.loads(text)
            reproducer = Path(record["file"])
            if not reproducer.is_file():
                reproducer = path.with_suffix(".agx")
            return FindingCase(reproducer.read_text(), list(record["pipeline"]),
                               record["pass"], record["oracle"], record["message"], path.stem)
        except (ValueError, KeyError, TypeError, OSError):
            raise GtestError(f"agxfuzz: {path} is not a finding's record") from None
    head = re.search(r"^; agxfuzz finding: (\S+) failed the (\S+) oracle\n; (.*)$", text, re.M)
    pipeline = re.search(r"^; pipeline: (.*)$", text, re.M)
    if head is None or pipeline is None:
        raise GtestError(f"agxfuzz: {path} has no finding header (; agxfuzz finding: ...)")
    return FindingCase(text, [n.strip() for n in pipeline.group(1).split(",")], head.group(1),
                       head.group(2), head.group(3), path.stem)


# --- the wire form as builder calls --------------------------------------------------------


def _opcodes(src: Path) -> dict:
    """Mesa's own opcode table (agx_opcodes.py of the tree): op -> (srcs, dests, imm names,
    variable srcs, variable dests)."""
    import importlib.util  # loaded late: only reading Mesa's opcode table needs it

    spec = importlib.util.spec_from_file_location(
        "agxfuzz_mesa_agx_opcodes", src / "src/asahi/compiler/agx_opcodes.py")
    module = importlib.util.module_from_spec(spec)
    old = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = old
    return {name: (op.srcs, op.dests, [imm.name for imm in op.imms], op.variable_srcs,
                   op.variable_dests) for name, op in module.opcodes.items()}


def _index(token: str) -> str:
    kind, value, size, mods = (int(part) for part in token.split("."))
    if kind == 0:
        text = "agx_null()"
    elif kind == 1:
        text = f"agx_get_index({value}, {SIZES[size]})"
    elif kind == 2:
        text = f"agx_immediate({value})"
    elif kind == 3:
        text = f"agx_uniform({value}, {SIZES[size]})"
    elif kind == 4:
        text = f"agx_register({value}, {SIZES[size]})"
    else:
        text = f"agx_undef({SIZES[size]})"
    if mods & 1:
        text = f"agx_abs({text})"
    if mods & 2:
        text = f"agx_neg({text})"
    return text


def _instruction(tokens: list[str], table: dict) -> list[str]:
    op = tokens[1]
    if op not in table:
        raise GtestError(f"agxfuzz: Mesa opcode {op!r} has no builder (a bridge pseudo-op)")
    nd, ns = int(tokens[2]), int(tokens[3])
    fields = dict(zip(WIRE_FIELDS, [int(t) for t in tokens[4:13]], strict=True))
    operands = [_index(t) for t in tokens[13:13 + nd + ns]]
    dests, srcs = operands[:nd], operands[nd:]
    n_srcs, n_dests, imms, var_srcs, var_dests = table[op]
    suffix = "_to" if n_dests or var_dests else ""
    args = ["b"]
    if var_dests:
        args.append(str(nd))
    args += dests if not var_dests else []
    if var_srcs:
        args.append(str(ns))
    args += srcs if not var_srcs else []
    covered = set()
    for imm in imms:
        field = "imm" if imm in IMM_UNION else FIELD_FOR_IMM.get(imm)
        covered.add(field)
        value = fields.get(field, 0) if field else 0
        if imm == "target":
            args.append(f"blk[{value}]" if value >= 0 else "NULL")
        elif imm in ("icond", "fcond", "format", "round", "sr", "lod_mode", "atomic_opc"):
            args.append(f"(enum agx_{imm if imm != 'format' else 'format'}){value}")
        elif imm == "invert_cond":
            args.append("true" if value else "false")
        else:
            args.append(f"{value}{'ull' if field == 'imm' and value >= 1 << 31 else ''}")
    lines = [f"I = agx_{op}{suffix}({', '.join(args)});"]
    if var_dests:
        lines += [f"I->dest[{k}] = {d};" for k, d in enumerate(dests)]
    if var_srcs:
        lines += [f"I->src[{k}] = {s};" for k, s in enumerate(srcs)]
    for field, member in (("sat", "saturate"), ("inv", "invert_cond"), ("nest", "nest"),
                          ("shift", "shift"), ("mask", "mask"), ("format", "format"),
                          ("cond", "icond"), ("imm", "imm")):
        if fields[field] and field not in covered:
            value = fields[field]
            lines.append(f"I->{member} = {'true' if field in ('sat', 'inv') else value};")
    if op == "begin_cf":
        lines.append("ctx->any_cf = true;")
    return lines


def builder_function(name: str, wire: list[str], table: dict, comment: str) -> str:
    """`static agx_context *NAME(void *mem_ctx)`: the shader of `wire` built with agx_builder."""
    shader = wire[0].split()
    nblocks, alloc = int(shader[1]), int(shader[2])
    body = [f"   agx_context *ctx = agxfuzz_shader(mem_ctx, {nblocks}, {alloc});",
            "   agx_block **blk = agxfuzz_blocks(ctx);", "   agx_builder _b, *b = &_b;",
            "   UNUSED agx_instr *I;"]
    for line in wire[1:]:
        tokens = line.split()
        if tokens[0] == "block":
            index, s0, s1, npreds = (int(t) for t in tokens[1:5])
            preds = [int(t) for t in tokens[5:5 + npreds]]
            body.append(f"   /* block {index} */")
            for k, succ in enumerate((s0, s1)):
                if succ >= 0:
                    body.append(f"   blk[{index}]->successors[{k}] = blk[{succ}];")
            for pred in preds:
                body.append(f"   agxfuzz_add_predecessor(blk[{index}], blk[{pred}]);")
            body.append(f"   _b = agx_init_builder(ctx, agx_after_block(blk[{index}]));")
        elif tokens[0] == "i":
            body += [f"   {text}" for text in _instruction(tokens, table)]
    return (f"/* {comment} */\nstatic agx_context *\n{name}(void *mem_ctx)\n{{\n"
            + "\n".join(body) + "\n   return ctx;\n}\n")


HELPERS = """\
#ifndef AGXFUZZ_TEST_HELPERS
#define AGXFUZZ_TEST_HELPERS
/* agxfuzz: a shader of N empty blocks in order, as Mesa's isel leaves them for the backend */
static agx_context *
agxfuzz_shader(void *mem_ctx, unsigned nblocks, unsigned alloc)
{
   agx_context *ctx = rzalloc(mem_ctx, agx_context);
   list_inithead(&ctx->blocks);
   ctx->nir = rzalloc(ctx, nir_shader);
   ctx->nir->info.stage = MESA_SHADER_COMPUTE;
   ctx->stage = MESA_SHADER_COMPUTE;
   ctx->alloc = alloc;
   ctx->num_blocks = nblocks;
   for (unsigned i = 0; i < nblocks; ++i) {
      agx_block *blk = rzalloc(ctx, agx_block);
      blk->index = i;
      list_inithead(&blk->instructions);
      util_dynarray_init(&blk->predecessors, blk);
      list_addtail(&blk->link, &ctx->blocks);
   }
   return ctx;
}

static agx_block **
agxfuzz_blocks(agx_context *ctx)
{
   agx_block **blk = rzalloc_array(ctx, agx_block *, ctx->num_blocks);
   agx_foreach_block(ctx, block)
      blk[block->index] = block;
   return blk;
}

static void
agxfuzz_add_predecessor(agx_block *block, agx_block *pred)
{
   util_dynarray_append(&block->predecessors, agx_block *, pred);
   if (pred->index >= block->index)
      block->loop_header = true;
}

static bool
agxfuzz_index_equal(agx_index a, agx_index b)
{
   return a.type == b.type && a.value == b.value && a.size == b.size &&
          a.abs == b.abs && a.neg == b.neg;
}

/* Instruction by instruction: what the instruction says (operands and their modifiers,
 * immediates, conditions, formats, shift, saturate), not kill flags or pointers */
static bool
agxfuzz_shader_equal(agx_context *A, agx_context *B)
{
   if (list_length(&A->blocks) != list_length(&B->blocks))
      return false;
   list_pair_for_each_entry(agx_block, a, b, &A->blocks, &B->blocks, link) {
      if (list_length(&a->instructions) != list_length(&b->instructions))
         return false;
      list_pair_for_each_entry(agx_instr, I, J, &a->instructions, &b->instructions, link) {
         bool target = agx_opcodes_info[I->op].immediates & AGX_IMMEDIATE_TARGET;
         if (I->op != J->op || I->nr_dests != J->nr_dests || I->nr_srcs != J->nr_srcs ||
             I->icond != J->icond || I->invert_cond != J->invert_cond ||
             I->nest != J->nest || I->shift != J->shift || I->saturate != J->saturate ||
             I->mask != J->mask || I->format != J->format ||
             (target ? (I->target ? (int)I->target->index : -1) !=
                          (J->target ? (int)J->target->index : -1)
                     : I->imm != J->imm))
            return false;
         for (unsigned d = 0; d < I->nr_dests; ++d) {
            if (!agxfuzz_index_equal(I->dest[d], J->dest[d]))
               return false;
         }
         for (unsigned s = 0; s < I->nr_srcs; ++s) {
            if (!agxfuzz_index_equal(I->src[s], J->src[s]))
               return false;
         }
      }
   }
   return true;
}

static bool
agxfuzz_in(const unsigned *list, unsigned n, unsigned v)
{
   for (unsigned k = 0; k < n; ++k) {
      if (list[k] == v)
         return true;
   }
   return false;
}

/* A live set against the reference: every value but those in `ignore` */
static void
agxfuzz_expect_set(BITSET_WORD *set, unsigned alloc, const unsigned *want, unsigned n,
                   const unsigned *ignore, unsigned nignore, const char *what)
{
   for (unsigned v = 0; v < alloc; ++v) {
      if (!agxfuzz_in(ignore, nignore, v)) {
         EXPECT_EQ((bool)BITSET_TEST(set, v), agxfuzz_in(want, n, v))
            << what << ": value " << v;
      }
   }
}
#endif
"""

STANDALONE = """\
/* agxfuzz: standalone wrapper (Mesa's test files have their own fixtures and includes) */
#include "agx_test.h"
#include <gtest/gtest.h>

class {fixture} : public testing::Test {{
 protected:
   {fixture}() {{ mem_ctx = ralloc_context(NULL); }}
   ~{fixture}() {{ ralloc_free(mem_ctx); }}
   void *mem_ctx;
}};

"""

# --- the test case -------------------------------------------------------------------------

FIXTURES = {"optimizer": "Optimizer", "cse": "Optimizer", "dce": "Optimizer",
            "lower-pseudo": "LowerPseudo"}
PRE_RA = {"optimizer", "cse", "dce", "schedule", "liveness"}


def _test_step(case: FindingCase) -> tuple[int, str, tuple[str, ...]]:
    """(index in the pipeline of the step the test runs, its Mesa name, bridge passes)."""
    if case.pass_name not in case.pipeline or not case.pass_name.startswith(PREFIX):
        raise GtestError(f"agxfuzz: {case.pass_name} is not a Mesa pass (mesa:NAME): a Mesa "
                         "test needs a Mesa finding")
    at = len(case.pipeline) - 1 - case.pipeline[::-1].index(case.pass_name)
    name = case.pass_name[len(PREFIX):]
    if name == "lower-copies":  # agx_ra lowers its own copies
        if f"{PREFIX}ra" not in case.pipeline[:at]:
            raise GtestError("agxfuzz: a mesa:lower-copies finding without mesa:ra before it "
                             "has no Mesa entry point to test")
        at = case.pipeline.index(f"{PREFIX}ra")
        name = "ra"
    passes = ("ra-direct",) if name == "ra" else MESA_PASSES[name]
    if any(p not in CALLS for p in passes):
        raise GtestError(f"agxfuzz: no Mesa call for {case.pass_name}")
    return at, name, passes


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text))


def _answer(binary: Path, passes, wire: list[str]):
    with BridgeClient(binary, timeout=20.0) as client:
        return client.request(list(passes), wire)


def _shader_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.split(" ", 1)[0] in ("shader", "block", "i")]


def gtest_case(case: FindingCase, src: Path, clean: Path, finding_bridge: Path,
              standalone: bool = False) -> str:
    """The gtest source for `case`. `clean`: the bridge of the tree the test is for (its
    output is the expected one); `finding_bridge`: the one the finding was found with."""
    at, name, passes = _test_step(case)
    fn = parse_function(case.program)
    for step in case.pipeline[:at]:
        registered(step).run(fn)
    if fn.level not in (EXEC, MACHINE):
        raise GtestError(f"agxfuzz: the input of {case.pass_name} is at the {fn.level} level")
    wire, names = encode(fn)
    table = _opcodes(src)
    test = f"Agxfuzz{_camel(case.stem)}"
    fixture = FIXTURES.get(name, "AgxfuzzMesa")
    calls = [f"   {CALLS[p]}" for p in passes]
    functions = [builder_function(f"{test}_input", wire, table,
                                  f"the input of {case.pass_name}, as the bridge hands it to Mesa")]
    if name == "liveness":
        body = _liveness_checks(fn, names)
    elif case.oracle == "crash":
        body = (["   /* Mesa asserted (or agx_validate failed): this runs to the end */"]
                + (["   agx_validate(ctx, \"agxfuzz\");"] if name in PRE_RA else []))
    else:
        found = _answer(finding_bridge, passes, wire)
        expected = _answer(clean, passes, wire)
        if expected.status != "ok":
            raise GtestError(f"agxfuzz: clean Mesa's {case.pass_name} fails on this input too "
                             f"({expected.message}): nothing to expect")
        if found.status == "ok" and found.lines == expected.lines:
            if name not in PRE_RA:
                raise GtestError(f"agxfuzz: the tree's {case.pass_name} gives the output the "
                                 "finding was found with: no expected output to check against")
            expected_wire, what = wire, "the reduced input left as it is (NEGCASE)"
        else:
            expected_wire, what = _shader_lines(expected.lines), "clean Mesa's output"
        functions.append(builder_function(f"{test}_expected", expected_wire, table,
                                          f"what {case.pass_name} should make of it: {what}"))
        body = [f"   agx_context *want = {test}_expected(mem_ctx);",
                "   if (!agxfuzz_shader_equal(ctx, want)) {",
                "      ADD_FAILURE() << \"" + case.pass_name + " produced unexpected results\";",
                "      fprintf(stderr, \"  Actual:\\n\");", "      agx_print_shader(ctx, stderr);",
                "      fprintf(stderr, \"  Expected:\\n\");",
                "      agx_print_shader(want, stderr);", "   }"]
    header = (f"/* agxfuzz finding: {case.pass_name} failed the {case.oracle} oracle\n"
              f" *   {case.message}\n * pipeline: {', '.join(case.pipeline)}\n"
              f" * The test builds what {case.pass_name} was given, runs "
              f"{' '.join(CALLS[p] for p in passes)} and checks the property that failed.\n */\n")
    test_f = (f"TEST_F({fixture}, {test})\n{{\n   agx_context *ctx = {test}_input(mem_ctx);\n"
              + "\n".join(calls) + "\n" + "\n".join(body) + "\n}\n")
    text = header + HELPERS + "\n" + "\n".join(functions) + "\n" + test_f
    return (STANDALONE.format(fixture=fixture) + text) if standalone else text


def _liveness_checks(fn, names) -> list[str]:
    """EXPECTs of agx_compute_liveness against the reference, per block, by wire index."""
    index = {value: i for i, value in names.values.items()}
    reference = reference_liveness(fn)
    lines = []
    for number, block in enumerate(fn.blocks):
        phis = sorted(index[phi.dest] for phi in block.phis())
        for kind, sets in (("live_in", reference.live_in), ("live_out", reference.live_out)):
            want = sorted(index[value] for value in sets[block] if value in index)
            ignore = phis if kind == "live_in" else []  # Mesa's live-in is after the phis
            lines.append(f"   {{ /* block {number} ({block.name}) */")
            lines.append(f"      static const unsigned want[] = {{{', '.join(map(str, want))}"
                         f"{', ' if want else ''}~0u}};")
            lines.append(f"      static const unsigned ignore[] = {{{', '.join(map(str, ignore))}"
                         f"{', ' if ignore else ''}~0u}};")
            lines.append(f"      agxfuzz_expect_set(blk[{number}]->{kind}, ctx->alloc, want, "
                         f"{len(want)}, ignore, {len(ignore)}, \"{kind} of block {number}\");")
            lines.append("   }")
    return ["   agx_block **blk = agxfuzz_blocks(ctx);", *lines]


# --- building and running it ---------------------------------------------------------------


def _cxx() -> str:
    return os.environ.get("CXX") or "c++"


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise GtestError(f"agxfuzz: {what}: {first_error(done.stderr)}")


def _cached(kind: str, key: str, make) -> Path:
    """cache_root()/KIND/KEY, made by `make(directory)` into a scratch directory first."""
    target = cache_root() / kind / key
    if (target / "done").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix="build-") as tmp:
        work = Path(tmp) / "out"
        work.mkdir()
        make(work)
        (work / "done").write_text("")
        try:
            os.replace(work, target)
        except OSError:  # a concurrent build got there first
            pass
    return target


def gtest_library(src: Path) -> Path:
    """Mesa's bundled gtest (src/gtest: gtest-all.cc, gtest_main.cc) as libgtest.a, once."""
    root = src / "src/gtest"
    digest = hashlib.sha256(subprocess.run([_cxx(), "--version"], capture_output=True,
                                           text=True, check=False).stdout.encode())
    for name in ("src/gtest-all.cc", "src/gtest_main.cc"):
        digest.update((root / name).read_bytes())

    def make(work: Path) -> None:
        objects = []
        for name in ("gtest-all", "gtest_main"):
            obj = work / f"{name}.o"
            _run([_cxx(), "-O1", "-w", "-std=c++17", f"-I{root / 'include'}", f"-I{root}",
                  "-c", str(root / "src" / f"{name}.cc"), "-o", str(obj)], "building gtest")
            objects.append(str(obj))
        _run(["ar", "rcs", str(work / "libgtest.a"), *objects], "archiving gtest")

    return _cached("gtest", digest.hexdigest()[:20], make) / "libgtest.a"


def mesa_library(src: Path, patches=()) -> Path:
    """Mesa's backend files (a planted variant's patches applied to copies) as libagx.a,
    with the generated headers beside it in gen/; cached per tree and patch set."""
    version = build.check_tree(src)
    key = hashlib.sha256("\n".join([build.input_hash(src), "gtest-lib",
                                    *(p.text for p in patches)]).encode()).hexdigest()[:20]

    def make(work: Path) -> None:
        gen = work / "gen"
        gen.mkdir()
        build.generate_headers(src, gen)
        patched = build.overlay_patches(src, work / "overlay", patches)
        flags = [*build.CFLAGS, *build.DEFINES, f'-DPACKAGE_VERSION="{version}"', f"-I{gen}"]
        flags += [f"-I{d}" for d in sorted({path.parent for path in patched.values()})]
        flags += [f"-I{src / d}" for d in build.INCLUDES]
        units = [src / "src/asahi/compiler" / f"{name}.c" for name in build.COMPILER_FILES]
        units = [patched.get(unit.relative_to(src).as_posix(), unit) for unit in units]
        units += [src / "src" / f"{name}.c" for name in build.UTIL_FILES]
        debug = work / "agxfuzz_debug.c"
        debug.write_text("int agx_compiler_debug = 0; /* agx_compile.c's, not built */\n")
        units += [gen / "agx_opcodes.c", debug]
        objects = [work / f"{k}_{unit.stem}.o" for k, unit in enumerate(units)]
        with ThreadPoolExecutor(build.JOBS) as pool:
            list(pool.map(lambda pair: _run([build.c_compiler(), *flags, "-c", str(pair[0]), "-o",
                                             str(pair[1])], "building Mesa's files"),
                          zip(units, objects, strict=True)))
        _run(["ar", "rcs", str(work / "libagx.a"), *map(str, objects)], "archiving Mesa")

    return _cached("gtest-lib", key, make)


def compile_and_run(source: str, src: Path, patches=()) -> subprocess.CompletedProcess:
    """`source` (a standalone test) compiled against the tree `src` (with `patches`) and
    Mesa's gtest, and run: its exit status and output."""
    src = Path(src).resolve()
    library = mesa_library(src, patches)
    gtest = gtest_library(src)
    with tempfile.TemporaryDirectory(prefix="agxfuzz-gtest-") as tmp:
        cpp = Path(tmp) / "test.cpp"
        cpp.write_text(source)
        # glsl_types.h, which C++ reaches through nir.h, wants one more generated header
        _run([sys.executable, str(src / "src/compiler/builtin_types_cpp_h.py"),
              str(Path(tmp) / "builtin_types_cpp.h")], "generating builtin_types_cpp.h")
        (Path(tmp) / "compiler").mkdir()
        (Path(tmp) / "compiler" / "builtin_types_cpp.h").write_text(
            (Path(tmp) / "builtin_types_cpp.h").read_text())
        binary = Path(tmp) / "test"
        flags = ["-std=c++17", "-O0", "-g", "-w", *build.DEFINES, f"-I{tmp}",
                 f"-I{library / 'gen'}",
                 f"-I{src / 'src/asahi/compiler/test'}", f"-I{src / 'src/gtest/include'}"]
        flags += [f"-I{src / d}" for d in build.INCLUDES]
        _run([_cxx(), *flags, str(cpp), str(library / "libagx.a"), str(gtest), "-lpthread",
              "-lm", "-o", str(binary)], "compiling the test")
        return subprocess.run([str(binary), "--gtest_color=no"], capture_output=True,
                              text=True, check=False, timeout=120)


def run_test_command(args) -> int:
    """`agxfuzz mesa test FINDING [--variant NAME] [--standalone] [--run]`."""
    try:
        src = Path(args.mesa_src) if args.mesa_src else default_mesa_src()
        if src is None:
            raise MesaBuildError("agxfuzz: no Mesa tree: set AGXFUZZ_MESA_SRC or pass "
                                 "--mesa-src DIR")
        src = src.resolve()
        check_tree(src)
        patches = []
        if args.variant:
            try:
                patches = [variants.load(args.variant)]
            except KeyError:
                raise UsageError(f"agxfuzz: unknown Mesa variant {args.variant!r}; known: "
                                 f"{', '.join(variants.names())}") from None
        case = load_finding(args.finding)
        clean = build_bridge(src).path
        found = (build_bridge(src, patches=patches).path if patches
                 else Path(os.environ.get("AGXFUZZ_MESA_BRIDGE") or clean))
        source = gtest_case(case, src, clean, found, standalone=args.standalone or args.run)
    except (GtestError, MesaBuildError, variants.PatchDoesNotApply) as error:
        raise UsageError(str(error)) from None
    print(source, end="")
    if not args.run:
        return 0
    runs = ([("with " + args.variant, patches, False)] if patches else []) + [
        ("on the tree", [], bool(not patches))]
    verdicts = []
    for label, with_patches, should_fail in runs:
        try:
            done = compile_and_run(source, src, with_patches)
        except GtestError as error:
            raise UsageError(str(error)) from None
        failed = done.returncode != 0
        print(f"// agxfuzz: {label}: the test {'FAILS' if failed else 'passes'}", flush=True)
        verdicts.append(failed == (should_fail or bool(with_patches)))
    return 0 if all(verdicts) else 1
