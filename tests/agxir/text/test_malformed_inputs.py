"""The standing guard against tracebacks on malformed input: mutate the golden files and
require that parsing, verifying, printing and interpreting raise only the documented
errors (ParseError; verifier errors as values; InputError for inputs that do not fit)."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify

GOLDEN = sorted((Path(__file__).resolve().parents[2] / "golden").rglob("*.agx"))
TEXTS = [path.read_text() for path in GOLDEN]
PIECES = ["#", "%", ":", "=", ",", "->", "[", "]", "{", "}", "9" * 5000, "0x" + "f" * 300,
          "ptr[", "func.", ".abs", ".sat", "phi", "r0l", "d3", "h7:32", "v1:16", "\ufeff",
          "\n", " ", "@", ";", "-1", "1.5", "0", "65536", "4294967296"]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + draw(st.integers(1, 12)):]
        else:
            text = text[:at] + draw(st.text(max_size=3)) + text[at:]
    return text


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_parse_verify_print_raise_only_documented_errors(text):
    try:
        fn = parse_function(text, "mutant.agx")
    except ParseError as error:
        assert str(error).startswith("mutant.agx:")
        return
    errors = verify(fn)
    printed = print_function(fn)  # the printer never raises, even on ill-formed IR
    if not errors:
        assert print_function(parse_function(printed)) == printed
