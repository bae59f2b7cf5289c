"""Building the Mesa bridge from a Mesa tree: where the tree is, what goes in, the cache.

`build_bridge(src)` generates Mesa's seven mako headers, compiles Mesa's AGX backend files,
its util files and our bridge C (`fuzz/mesa/c/`) with the system C compiler (two jobs), and
links `agxfuzz-mesa-bridge`. The result is cached under `$XDG_CACHE_HOME/agxfuzz/mesa/`
(default `~/.cache`) by a hash of every input: the Mesa files the build reads (the compiled
sources and every header and generator script of the directories it includes), the bridge
C, the compiler's version and the flags. A second build with the same inputs is a lookup;
any edited input is a new key. Nothing is written into the Mesa tree (CI gets it read-only).

Errors are `MesaBuildError`, one line: a missing tree, a directory that is not a Mesa tree
with the AGX backend, mako missing, or the first compiler error as `file:line:col: error: ...`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fuzz.mesa.fixes import ENV, all_fixes
from fuzz.mesa.variants import apply

BRIDGE_C = Path(__file__).parent / "c"
BINARY = "agxfuzz-mesa-bridge"
JOBS = 2

# The backend passes and what they call (README.agxfuzz.md of the shared tree).
COMPILER_FILES = (
    "agx_optimizer", "agx_opt_cse", "agx_dce", "agx_register_allocate",
    "agx_lower_parallel_copy", "agx_lower_pseudo", "agx_pressure_schedule", "agx_liveness",
    "agx_print", "agx_validate", "agx_ir", "agx_lower_uniform_sources", "agx_performance",
)  # fmt: skip
UTIL_FILES = (
    "util/ralloc", "util/hash_table", "util/set", "util/u_dynarray", "util/u_worklist",
    "util/dag", "util/u_debug", "util/os_misc", "util/os_file", "util/softfloat",
    "util/half_float", "util/futex", "util/u_cpu_detect", "util/u_printf", "util/u_thread",
    "c11/impl/threads_posix",
)  # fmt: skip
# (script relative to src/, arguments, output captured from stdout or None)
GENERATORS = (
    ("asahi/compiler/agx_opcodes.h.py", [], "agx_opcodes.h"),
    ("asahi/compiler/agx_opcodes.c.py", [], "agx_opcodes.c"),
    ("asahi/compiler/agx_builder.h.py", [], "agx_builder.h"),
    ("compiler/nir/nir_opcodes_h.py", [], "nir_opcodes.h"),
    ("compiler/nir/nir_intrinsics_h.py", ["--outdir", "."], None),
    ("compiler/nir/nir_intrinsics_indices_h.py", ["--outdir", "."], None),
    ("compiler/builtin_types_h.py", ["builtin_types.h"], None),
)
# Directories whose headers and scripts the build reads: hashed whole (file contents).
HASHED_DIRS = ("asahi/compiler", "util", "c11", "compiler", "../include", "gallium/include",
               "mapi", "mesa/main")
HASHED_SUFFIXES = (".c", ".h", ".py", ".cpp")
INCLUDES = ("include", "src", "src/compiler", "src/compiler/nir", "src/asahi/compiler",
            "src/mesa", "src/gallium/include", "src/mapi")
DEFINES = ("-D_GNU_SOURCE", "-DHAVE_PTHREAD", "-DHAVE_ENDIAN_H", "-DHAVE_STRUCT_TIMESPEC",
           "-DHAVE_TIMESPEC_GET", "-DHAVE_SECURE_GETENV", "-DHAVE_LINUX_FUTEX_H",
           "-DHAVE_GNU_QSORT_R")
# Asserts stay on (no NDEBUG): Mesa's asserts and agx_validate are what a debug build runs.
CFLAGS = ("-O1", "-g", "-std=gnu11", "-fno-strict-aliasing", "-w")
# build_bridge(coverage=True): gcov's counters (fuzz/mesa/coverage.py); -O0 so lines map
COVERAGE_FLAGS = ("--coverage", "-O0", "-DAGXFUZZ_COVERAGE")


WHERE = "set AGXFUZZ_MESA_SRC, or name one: mesa build --mesa-src DIR, run --mesa DIR"


class MesaBuildError(Exception):
    """One line saying why the bridge could not be built."""


@dataclass(frozen=True)
class Bridge:
    path: Path
    mesa_src: Path
    version: str
    cached: bool  # True when the build was a cache hit


def default_mesa_src() -> Path | None:
    """$AGXFUZZ_MESA_SRC, else ../shared/mesa-23.3.6 beside the repository if it exists."""
    env = os.environ.get("AGXFUZZ_MESA_SRC")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    shared = repo.parent / "shared" / "mesa-23.3.6"
    return shared if shared.is_dir() else None


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agxfuzz" / "mesa"


def check_tree(src: Path) -> str:
    """The tree's Mesa version; raises MesaBuildError unless `src` has the AGX backend."""
    if not src.is_dir():
        raise MesaBuildError(f"agxfuzz: no Mesa tree at {src} ({WHERE})")
    needed = [f"src/asahi/compiler/{name}.c" for name in COMPILER_FILES]
    needed += [f"src/{name}.c" for name in UTIL_FILES]
    needed += [f"src/{script}" for script, _, _ in GENERATORS]
    missing = [name for name in needed if not (src / name).is_file()]
    if missing:
        raise MesaBuildError(f"agxfuzz: {src} is not a Mesa tree with the AGX backend "
                             f"(no {missing[0]}; {len(missing)} of {len(needed)} files missing)")
    version = src / "VERSION"
    return version.read_text().strip() if version.is_file() else "unknown"


def c_compiler() -> str:
    return os.environ.get("CC") or "cc"


def _cc_version() -> str:
    try:
        done = subprocess.run([c_compiler(), "--version"], capture_output=True, text=True, check=False)
    except OSError as error:
        raise MesaBuildError(f"agxfuzz: no C compiler ({c_compiler()}: {error.strerror})") from None
    return done.stdout


def input_hash(src: Path) -> str:
    """A hash of everything the build reads: the Mesa files, our C, the compiler, flags."""
    digest = hashlib.sha256()
    digest.update(_cc_version().encode())
    digest.update(repr((CFLAGS, DEFINES, INCLUDES, COMPILER_FILES, UTIL_FILES)).encode())
    roots = [(src / "src" / d).resolve() for d in HASHED_DIRS] + [BRIDGE_C]
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix in HASHED_SUFFIXES and path.is_file():
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def _python_with_mako() -> str:
    try:
        import mako  # noqa: F401  (loaded late: only a Mesa build needs it)
    except ImportError:
        raise MesaBuildError("agxfuzz: mako is needed to generate Mesa's headers "
                             "(pip install 'agxfuzz[mesa]')") from None
    return sys.executable


def generate_headers(src: Path, gen: Path) -> None:
    python = _python_with_mako()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for script, arguments, output in GENERATORS:
        path = src / "src" / script
        done = subprocess.run([python, str(path), *arguments], cwd=gen, env=env,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise MesaBuildError(f"agxfuzz: {path}: generator failed: {last}")
        if output is not None:
            (gen / output).write_text(done.stdout)


ERROR_LINE = re.compile(r"^(\S+?):(\d+):(\d+): (fatal )?error: .*$", re.MULTILINE)


def first_error(output: str) -> str:
    match = ERROR_LINE.search(output)
    if match:
        return match.group(0)
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[0] if lines else "the compiler failed with no output"


def _compile_all(src: Path, work: Path, version: str, patches=(), coverage=False) -> Path:
    gen = work / "gen"
    gen.mkdir()
    generate_headers(src, gen)
    flags = [*CFLAGS, *(COVERAGE_FLAGS if coverage else ()), *DEFINES, f'-DPACKAGE_VERSION="{version}"',
             f'-DAGXFUZZ_MESA_VERSION="{version}"', f"-I{gen}", f"-I{BRIDGE_C}"]
    patched = overlay_patches(src, work / "overlay", patches)  # before the tree: ours win
    flags += [f"-I{d}" for d in sorted({path.parent for path in patched.values()})]
    flags += [f"-I{src / d}" for d in INCLUDES]
    units = [src / "src/asahi/compiler" / f"{name}.c" for name in COMPILER_FILES]
    units = [patched.get(unit.relative_to(src).as_posix(), unit) for unit in units]
    units += [src / "src" / f"{name}.c" for name in UTIL_FILES]
    units += [gen / "agx_opcodes.c"] + sorted(BRIDGE_C.glob("*.c"))
    objects = [work / f"{index}_{unit.stem}.o" for index, unit in enumerate(units)]

    def compile_one(pair):
        unit, obj = pair
        return subprocess.run([c_compiler(), *flags, "-c", str(unit), "-o", str(obj)],
                              capture_output=True, text=True, check=False)

    with ThreadPoolExecutor(JOBS) as pool:
        futures = [pool.submit(compile_one, pair) for pair in zip(units, objects, strict=True)]
        for future in futures:  # in order: the first error reported is the first file's
            done = future.result()
            if done.returncode != 0:
                for pending in futures:
                    pending.cancel()
                raise MesaBuildError(first_error(done.stderr))
    binary = work / BINARY
    done = subprocess.run([c_compiler(), *map(str, objects), "-o", str(binary), "-lm", "-lpthread",
                           *(["--coverage"] if coverage else []),
                           # copies.c: agx_ra's parallel copies through the bridge
                           "-Wl,--wrap=agx_emit_parallel_copies"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MesaBuildError(f"agxfuzz: linking the bridge failed: {first_error(done.stderr)}")
    return binary


def overlay_patches(src: Path, overlay: Path, patches) -> dict[str, Path]:
    """Patched copies of the files `patches` (fuzz/mesa/variants) touch, under `overlay`:
    {path in the tree: the copy}. PatchDoesNotApply (one line, the patch's name)."""
    texts: dict[str, str] = {}

    def read(path: str) -> str | None:
        if path in texts:
            return texts[path]
        return (src / path).read_text() if (src / path).is_file() else None

    for patch in patches:
        texts.update(apply(patch, read))
    out = {}
    for path, text in texts.items():
        (overlay / path).parent.mkdir(parents=True, exist_ok=True)
        (overlay / path).write_text(text)
        out[path] = overlay / path
    return out


def build_bridge(src: Path | None = None, *, force: bool = False, patches=None,
                 coverage: bool = False) -> Bridge:
    """The bridge built from `src` (default `default_mesa_src()`), from the cache when the
    same inputs were built before. `patches`: `fuzz.mesa.variants.Patch`es applied to
    copies of the files they touch (a wrong variant's build; part of the cache key); one
    that does not apply raises PatchDoesNotApply naming it. None: every fix of
    fuzz/mesa/fixes when AGXFUZZ_MESA_FIXES=1 (run --mesa --with-fixes), else none. `coverage`: a gcov build, its
    own cache entry, with the .gcno files in `gcno/` beside the binary and `gcno/strip`
    the GCOV_PREFIX_STRIP that puts a run's .gcda files beside them (fuzz/mesa/coverage.py)."""
    src = src if src is not None else default_mesa_src()
    if src is None:
        raise MesaBuildError(f"agxfuzz: no Mesa tree ({WHERE})")
    src = Path(src).resolve()
    version = check_tree(src)
    key = input_hash(src)
    if patches is None:
        patches = all_fixes() if os.environ.get(ENV) == "1" else ()
    if patches:  # a wrong variant: its patches are inputs too

        for patch in patches:  # refuse one that does not apply before any compiling
            apply(patch, lambda path: (src / path).read_text()
                  if (src / path).is_file() else None)
        key = hashlib.sha256("\n".join([key, *(p.text for p in patches)]).encode())
        key = key.hexdigest()[:20]
    if coverage:
        key = hashlib.sha256(f"{key}\ncoverage {COVERAGE_FLAGS}".encode()).hexdigest()[:20]
    target = cache_root() / key / BINARY
    if target.is_file() and not force:
        return Bridge(target, src, version, cached=True)
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent.parent, prefix="build-") as tmp:
        binary = _compile_all(src, Path(tmp), version, patches, coverage)
        target.parent.mkdir(exist_ok=True)
        if coverage:  # the notes gcov reads, and how deep the objects were built
            notes = target.parent / "gcno"
            notes.mkdir(exist_ok=True)
            for gcno in Path(tmp).glob("*.gcno"):
                shutil.copy2(gcno, notes / gcno.name)
            (notes / "strip").write_text(f"{len(Path(tmp).resolve().parts) - 1}\n")
        staged = target.parent / f".{BINARY}.{os.getpid()}"
        shutil.copy2(binary, staged)
        os.replace(staged, target)  # atomic: a concurrent build sees all or nothing
    return Bridge(target, src, version, cached=False)
