"""Talking to the bridge process: one persistent `agxfuzz-mesa-bridge`, request after
request, each answered as a `Result` (the passes' output, Mesa's crash with its assert
text, a timeout, or a request the bridge refused).

The bridge serves the requests in a forked worker (which reads them and writes the answers
itself; replaced when it dies) and enforces each request's timeout, so a Mesa assert or a
hang ends one request. The client keeps a backstop: if no answer comes within the timeout
plus a margin (the bridge itself is stuck), it kills the bridge and starts a new one for the
next request. `run_passes(fn, passes)` is the whole round: encode, send, decode.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agxir import ir
from agxir.ir import MACHINE
from fuzz.mesa.wire import Liveness, Names, decode, encode

DEFAULT_TIMEOUT = 10.0  # seconds per request
BACKSTOP = 5.0  # extra seconds before the client decides the bridge itself is stuck

# The bridge's pass names; `mesa:NAME` is the pass under test.
PASSES = ("optimizer", "cse", "dce", "dce-instructions", "lower-uniform-sources", "schedule",
          "ra", "ra-direct", "lower-copies", "lower-pseudo", "liveness", "validate",
          "spin")  # spin: never ends (test support)
# agx_compile.c's post-isel order, for the passes the bridge builds (agx_lower_64bit_postra,
# agx_insert_waits, agx_opt_empty_else, agx_opt_break_if and agx_opt_jmp_none are not built).
# `ra-direct` is agx_ra as Mesa builds it (its copies lowered inside); `ra` keeps them as
# parallel copies for the RA checker, and `lower-copies` then runs Mesa's sequentializer.
BACKEND = ("dce-instructions", "cse", "optimizer", "lower-uniform-sources", "dce", "schedule",
           "ra-direct", "lower-pseudo")


class BridgeError(Exception):
    """The bridge could not be started or answered nonsense (message: one line)."""


@dataclass
class Result:
    status: str  # "ok", "crash", "timeout", "error"
    lines: list[str]  # ok: the shader lines; otherwise Mesa's stderr (or the reason)
    detail: str = ""  # crash: "signal 6" / "exit 1"

    @property
    def message(self) -> str:
        """The crash's signature: Mesa's assert (or agx_validate's) first telling line."""
        for line in self.lines:
            if "Assertion" in line or "after" in line or "unreachable" in line.lower():
                return line.strip()
        return self.lines[0].strip() if self.lines else (self.detail or self.status)


class BridgeClient:
    """One bridge process, restarted when it dies or hangs."""

    def __init__(self, binary: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.binary = Path(binary)
        self.timeout = timeout
        self.process: subprocess.Popen | None = None
        self.version = ""
        self.restarts = 0
        self.owner_pid = os.getpid()  # a forked worker must start its own bridge
        self._lock = threading.Lock()

    def start(self) -> None:
        env = dict(os.environ, MESA_DEBUG="silent")
        self.process = subprocess.Popen(
            [str(self.binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, bufsize=0,
        )
        self._buffer = b""
        self._fd = self.process.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)
        hello = self._read_line(self.timeout + BACKSTOP)
        if hello is None or not hello.startswith("agxfuzz-mesa-bridge "):
            self.close()
            raise BridgeError(f"agxfuzz: {self.binary} is not the Mesa bridge (said {hello!r})")
        self.version = hello.split()[-1]

    def close(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                stream.close()

    def __enter__(self) -> BridgeClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _wait(self, deadline: float) -> bool:
        """Reads what the bridge has written into the buffer, waiting until `deadline`;
        False on EOF or when the deadline passes."""
        left = deadline - time.monotonic()
        if left <= 0 or not self._poll.poll(left * 1000):
            return False
        chunk = os.read(self._fd, 1 << 16)
        if not chunk:
            return False
        self._buffer += chunk
        return True

    def _read_line(self, timeout: float) -> str | None:
        """One line from the bridge, or None on EOF or when `timeout` passes."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if not self._wait(deadline):
                return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace")

    def _read_answer(self, timeout: float) -> tuple[str | None, list[str], bool]:
        """One whole answer, read in as few reads as the pipe allows and split once: (its
        first line, the lines up to `end`, whether it ended). (None, [], False): no answer
        at all within `timeout`; (head, lines, False): the bridge stopped mid-answer."""
        deadline = time.monotonic() + timeout
        start = 0
        while True:
            buffer = self._buffer
            if buffer.startswith(b"end\n"):  # no head line (never sent)
                end = 0
                break
            end = buffer.find(b"\nend\n", start)
            if end >= 0:
                break
            start = max(0, len(buffer) - 4)
            if not self._wait(deadline):
                lines = buffer.decode(errors="replace").split("\n")
                return (lines[0] if buffer else None), lines[1:-1], False
        text = buffer[:end].decode(errors="replace")
        self._buffer = buffer[end + 5:] if end else buffer[4:]
        lines = text.split("\n")
        return lines[0], lines[1:], True

    def _exchange(self, request: bytes, timeout: float):
        """Send one request; (first answer line, the lines up to `end`, whether the answer
        ended: False when the bridge went quiet)."""
        written = self.process.stdin.write(request)  # unbuffered: one write(2), maybe short
        while written < len(request):  # a signal in the middle of a large request
            written += self.process.stdin.write(memoryview(request)[written:])
        return self._read_answer(timeout + BACKSTOP)

    def request(self, passes: list[str], shader: list[str],
                timeout: float | None = None) -> Result:
        """Run `passes` on the wire-form `shader`; never raises for what Mesa does."""
        timeout = self.timeout if timeout is None else timeout
        with self._lock:
            if self.process is None or self.process.poll() is not None:
                if self.process is not None:
                    self.restarts += 1
                self.start()
            text = (f"request {max(1, int(timeout * 1000))}\npasses {' '.join(passes)}\n"
                    + "\n".join(shader) + "\nend\n")
            try:
                head, lines, ended = self._exchange(text.encode(), timeout)
            except BrokenPipeError:
                self.close()
                return Result("error", ["the bridge died before the request was sent"])
            except BaseException:
                # Interrupted mid-request (the harness's deadline, Ctrl-C): the answer may
                # still come, and must not be read as the next request's; start afresh.
                self.close()
                raise
            if head is None:
                self.close()  # stuck or dead: the next request starts a new bridge
                return Result("timeout", ["the bridge did not answer"], "bridge")
            if not ended:
                self.close()
                return Result("timeout", ["the bridge stopped mid-answer"], "bridge")
        kind, _, detail = head.partition(" ")
        if kind == "ok":
            return Result("ok", lines)
        if kind in ("crash", "timeout"):
            return Result(kind, [line[2:] for line in lines], detail)
        if kind == "error":
            return Result("error", [detail], detail)
        return Result("error", [f"unexpected answer {head!r}"])


@dataclass
class Outcome:
    result: Result
    function: ir.Function | None = None
    liveness: Liveness | None = None


def output_level(fn: ir.Function, passes: list[str] | tuple[str, ...]) -> str:
    allocating = {"ra", "ra-direct"} & set(passes)
    return "machine" if fn.level == MACHINE or allocating else fn.level


def run_passes(client: BridgeClient, fn: ir.Function, passes: list[str] | tuple[str, ...],
               timeout: float | None = None, *, checked: bool = False) -> Outcome:
    """`fn` through Mesa's `passes`; raises Untranslatable (before sending) or WireError
    (Mesa answered something the model cannot say)."""
    lines, names = encode(fn, checked=checked)
    result = client.request(list(passes), lines, timeout)
    if result.status != "ok":
        return Outcome(result)
    function, liveness = decode(result.lines, names, output_level(fn, passes))
    return Outcome(result, function, liveness)


__all__ = ["BridgeClient", "BridgeError", "Names", "Outcome", "Result", "run_passes"]
