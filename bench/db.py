"""The campaign database's cost per operation, on a directory and on a Redis server: what a
campaign pays per finding (record, claim) and per new corpus entry (corpus_add).

    python bench/db.py [--redis redis://127.0.0.1:6379/15] [--count 500]

The Redis database given is flushed first: name one nothing else uses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.campaign_db.db import open_db  # noqa: E402
from fuzz.campaign_db.entry import CorpusEntry  # noqa: E402
from fuzz.generate import GENERATOR_VERSION  # noqa: E402


def per_operation(operation, count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        operation(i)
    return (time.perf_counter() - started) / count


def measure(spec: str, count: int) -> None:
    with open_db(spec) as db:
        if spec.startswith("redis"):
            db.client.flushdb()
        claim = per_operation(lambda i: db.claim(f"pass|oracle|signature {i}"), count)
        add = per_operation(lambda i: db.corpus_add(CorpusEntry(
            i.to_bytes(4, "little") * 50, GENERATOR_VERSION, frozenset({f"f{i}", "g"}), "bench"
        )), count)
        record = per_operation(lambda i: db.record_finding(f"s{i}", b"x" * 2000), 50)
        started = time.perf_counter()
        entries = db.corpus_entries()
        fetch = time.perf_counter() - started
        kind = "redis" if spec.startswith("redis") else "directory"
        print(f"{kind:<10} claim {claim * 1e6:6.0f} us   corpus_add {add * 1e6:6.0f} us   "
              f"record_finding {record * 1e6:6.0f} us   corpus_entries ({len(entries)}) "
              f"{fetch * 1e3:5.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", metavar="URL", help="also measure this Redis database "
                        "(flushed first)")
    parser.add_argument("--count", type=int, default=500, help="operations of each kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        measure(str(Path(directory) / "db"), args.count)
    if args.redis:
        measure(args.redis, args.count)


if __name__ == "__main__":
    main()
