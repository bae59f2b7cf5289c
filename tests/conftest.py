"""Test-wide settings: Hypothesis profiles chosen by HYPOTHESIS_PROFILE.

`ci` is deterministic (derandomized, no deadline, no example database) so a CI run is
reproducible; `dev` (the default) explores new examples on every run; `thorough` runs many
more examples for a local soak. z3 budgets are resource limits (`oracles.smt.limits`), so no
verdict depends on the machine's load.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

from oracles.smt import limits

# z3 verdicts in tests depend on the query alone, never on the machine's load: every budget
# is a resource limit, in this process and in the commands the tests start.
os.environ.setdefault(limits.ENVIRONMENT, str(limits.RLIMIT_PER_MS))
limits.use_resource_limit(int(os.environ[limits.ENVIRONMENT]))

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile("thorough", deadline=None, max_examples=2000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _private_cache_home(tmp_path_factory, monkeypatch):
    """Commands that keep a cache (the audit's proof cache) keep it per test, never in the
    user's home: a test must not be answered by an earlier run's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))
