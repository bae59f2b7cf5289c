"""The mutation bench's mutator (bench/mutants.py): which mutants a small source has, that
each changes exactly one node and nothing else of the file, and that the sample is a
deterministic function of the seed; and the bench's view of which pipelines see a module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench.mutants import enumerate_mutants, sample

SOURCE = '''"""A docstring with 1 and < in it."""

LIMIT: int = 4


def f(xs, y):
    """Also a docstring."""
    total = 0
    for x in xs[1:y]:
        if x < y and not x == 2:
            total += x
        xs.append(x)
    return total > 0


def g(a: int = 7) -> bool:
    return True
'''

EXPECTED = [
    (3, "constant", "4 -> 5"),
    (3, "constant", "4 -> 3"),
    (8, "drop", "drop `total = 0`"),
    (8, "constant", "0 -> 1"),
    (8, "constant", "0 -> -1"),
    (9, "slice", "slice upper y -> y + 1"),
    (9, "slice", "slice upper y -> y - 1"),
    (9, "constant", "1 -> 2"),
    (9, "constant", "1 -> 0"),
    (10, "boolop", "and -> or"),
    (10, "compare", "< -> <="),
    (10, "not", "not x == 2 -> x == 2"),
    (10, "compare", "== -> !="),
    (10, "constant", "2 -> 3"),
    (10, "constant", "2 -> 1"),
    (11, "drop", "drop `total += x`"),
    (12, "drop", "drop `xs.append(x)`"),
    (13, "compare", "> -> >="),
    (13, "constant", "0 -> 1"),
    (13, "constant", "0 -> -1"),
    (16, "constant", "7 -> 8"),
    (16, "constant", "7 -> 6"),
    (17, "return", "return True -> return False"),
]


def test_the_mutants_of_a_small_source_are_the_expected_ones_in_source_order():
    found = [(m.line, m.kind, m.description) for m in enumerate_mutants(SOURCE)]
    assert found == EXPECTED


def test_enumeration_is_deterministic():
    assert enumerate_mutants(SOURCE, "m.py") == enumerate_mutants(SOURCE, "m.py")


def _differing_nodes(a: ast.AST, b: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """The outermost pairs of nodes that differ between two trees of the same shape above them."""
    if type(a) is not type(b):
        return [(a, b)]
    out: list = []
    own = False
    for (_, x), (_, y) in zip(ast.iter_fields(a), ast.iter_fields(b), strict=True):
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for p, q in zip(x, y, strict=True):
                if isinstance(p, ast.AST) and isinstance(q, ast.AST):
                    out += _differing_nodes(p, q)
                elif p != q:
                    own = True
        elif isinstance(x, ast.AST) and isinstance(y, ast.AST):
            out += _differing_nodes(x, y)
        elif x != y:
            own = True
    return [(a, b)] if own else out


@pytest.mark.parametrize("number", range(len(EXPECTED)))
def test_applying_a_mutant_changes_exactly_one_node(number):
    mutant = enumerate_mutants(SOURCE)[number]
    mutated = mutant.apply(SOURCE)
    differences = _differing_nodes(ast.parse(SOURCE), ast.parse(mutated))
    assert len(differences) == 1, (mutant, differences)
    # The rest of the file is untouched: only the lines of the mutated node differ.
    before, after = SOURCE.splitlines(), mutated.splitlines()
    changed = [i + 1 for i, (x, y) in enumerate(zip(before, after)) if x != y]
    assert changed and set(changed) <= {mutant.line}, (mutant, changed)


def test_mutants_of_a_real_pass_module_each_apply_to_a_parsable_source():
    path = Path(__file__).resolve().parents[2] / "agxir" / "passes" / "cmpsel.py"
    source = path.read_text()
    for mutant in enumerate_mutants(source, "agxir/passes/cmpsel.py"):
        assert mutant.apply(source) != source


def test_the_sampler_is_deterministic_for_a_seed_and_extends_with_k():
    mutants = enumerate_mutants(SOURCE, "m.py")
    assert sample(mutants, 5, seed=1) == sample(mutants, 5, seed=1)
    assert sample(mutants, 5, seed=1) != sample(mutants, 5, seed=2)
    assert set(sample(mutants, 3, seed=1)) <= set(sample(mutants, 8, seed=1))
    chosen = sample(mutants, 5, seed=1)
    assert chosen == sorted(chosen, key=lambda m: m.number) and len(chosen) == 5
    assert sample(mutants, 100, seed=1) == mutants
    assert sample([], 3, seed=1) == []


def test_a_module_only_the_passes_import_is_restricted_to_their_pipelines(tmp_path):
    from bench.mutation import affected_passes, import_graph

    for package in ("agxir/passes", "agxir/machine", "fuzz", "oracles"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "agxir/__init__.py").write_text("")
    (tmp_path / "agxir/passes/helper.py").write_text("X = 1\n")
    (tmp_path / "agxir/passes/shared.py").write_text("Y = 1\n")
    (tmp_path / "agxir/passes/a.py").write_text("from agxir.passes.helper import X\n")
    (tmp_path / "agxir/passes/b.py").write_text("def f():\n    from agxir.passes import shared\n")
    (tmp_path / "agxir/passes/__init__.py").write_text("from agxir.passes import a, b\n")
    (tmp_path / "fuzz/campaign.py").write_text(
        "import agxir.passes\nfrom agxir.passes.shared import Y\n")
    graph = import_graph(tmp_path)
    passes = {"pa": "agxir.passes.a", "pb": "agxir.passes.b"}
    # The registry imports every pass, but does not make the campaign see `helper`.
    assert affected_passes("agxir/passes/helper.py", graph, passes) == ["pa"]
    assert affected_passes("agxir/passes/a.py", graph, passes) == ["pa"]
    # The checking code imports `shared` itself: every pipeline.
    assert affected_passes("agxir/passes/shared.py", graph, passes) is None


def test_checking_code_that_runs_only_in_the_machine_pipelines_adds_them(tmp_path):
    from bench.mutation import affected_passes, import_graph

    for package in ("agxir/passes", "agxir/machine", "fuzz"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "agxir/__init__.py").write_text("")
    (tmp_path / "agxir/machine/structure.py").write_text("Z = 1\n")
    (tmp_path / "agxir/machine/lower_cf.py").write_text(
        "from agxir.machine.structure import Z\n")
    # The harness asks lower_cf about programs it declined: only where lower-cf runs.
    (tmp_path / "fuzz/campaign.py").write_text(
        "def declined():\n    from agxir.machine.lower_cf import Z\n")
    graph = import_graph(tmp_path)
    passes = {"lower-cf": "agxir.machine.lower_cf", "other": "agxir.passes.other"}
    assert affected_passes("agxir/machine/structure.py", graph, passes) == ["lower-cf"]


def test_the_shuffle_order_starts_with_each_smaller_sample():
    mutants = enumerate_mutants(SOURCE, "m.py")
    shuffled = sample(mutants, 8, seed=3, source_order=False)
    for j in range(1, 9):
        assert sorted(shuffled[:j], key=lambda m: m.number) == sample(mutants, j, seed=3)
