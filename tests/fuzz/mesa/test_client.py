"""The bridge process: a Mesa assert or a hang ends one request, never the bridge; a bad
request is refused, not a crash."""

from __future__ import annotations


def _ins(op, nd, ns, *operands, imm=0, mask=0, fmt=0):
    fields = [op, nd, ns, 0, 0, 0, 0, 0, mask, fmt, imm, -1]
    return "i " + " ".join(map(str, fields + list(operands)))


# A 16-bit immediate feeding a 32-bit phi: Mesa's IR never has it (its isel gives phis no
# immediates) and agx_ra asserts the phi's source and destination sizes agree.
MISMATCHED_PHI = [
    "shader 2 3",
    "block 0 1 -1 0",
    _ins("mov_imm", 1, 0, "1.0.0.0", imm=5),
    "block 1 -1 -1 1 0",
    _ins("phi", 1, 1, "1.1.1.0", "1.0.0.0"),
    _ins("local_store", 0, 3, "1.1.1.0", "2.0.0.0", "2.0.0.0", mask=1, fmt=2),
    _ins("stop", 0, 0),
]
SMALL = [
    "shader 1 1",
    "block 0 -1 -1 0",
    _ins("mov_imm", 1, 0, "1.0.1.0", imm=7),
    _ins("local_store", 0, 3, "1.0.1.0", "2.0.0.0", "2.0.0.0", mask=1, fmt=2),
    _ins("stop", 0, 0),
]


def test_an_assert_ends_one_request_with_its_text(client):
    crashed = client.request(["ra"], MISMATCHED_PHI)
    assert crashed.status == "crash"
    assert crashed.detail == "signal 6"
    assert "agx_register_allocate.c" in crashed.message
    assert "Assertion `dest.size == src.size' failed" in crashed.message
    after = client.request([], SMALL)
    assert after.status == "ok"
    assert client.restarts == 0  # the same bridge process answered


def test_a_hang_ends_one_request_as_a_timeout(client):
    hung = client.request(["spin"], SMALL, timeout=0.3)
    assert hung.status == "timeout"
    after = client.request(["optimizer"], SMALL)
    assert after.status == "ok"
    assert client.restarts == 0


def test_a_dead_bridge_is_restarted_for_the_next_request(client):
    assert client.request([], SMALL).status == "ok"
    client.process.kill()
    client.process.wait()
    assert client.request([], SMALL).status == "ok"
    assert client.restarts == 1


def test_bad_requests_are_refused_not_crashes(client):
    unknown = client.request(["no-such-pass"], SMALL)
    assert (unknown.status, unknown.message) == ("error", "unknown pass no-such-pass")
    malformed = client.request([], ["shader 1 1", "block 0 -1 -1 0", "i mov_imm 1"])
    assert (malformed.status, malformed.message) == ("error", "malformed instruction line")
    assert client.request([], SMALL).status == "ok"


def test_an_interrupted_request_leaves_no_answer_for_the_next(client, monkeypatch):
    """A deadline (SIGALRM in the harness) can interrupt the client mid-answer: the bridge is
    restarted, so the next request never reads the interrupted one's answer."""
    assert client.request([], SMALL).status == "ok"
    real = client._read_answer

    def interrupted(timeout):
        raise KeyboardInterrupt  # what a signal handler's exception looks like here

    monkeypatch.setattr(client, "_read_answer", interrupted)
    try:
        client.request(["optimizer"], SMALL)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interruption was swallowed")
    monkeypatch.setattr(client, "_read_answer", real)
    answer = client.request([], MISMATCHED_PHI)
    assert answer.status == "ok"
    assert answer.lines[0] == "shader 2 3 0"  # this request's program, not SMALL's


def test_one_request_leaves_nothing_for_the_next(client):
    """A worker serves request after request: what `ra` measured (its demand line) and
    Mesa's stderr of a crash belong to their own request only."""
    allocated = client.request(["dce", "ra"], SMALL)
    assert allocated.status == "ok"
    assert any(line.startswith("demand ") for line in allocated.lines)
    plain = client.request([], SMALL)
    assert plain.status == "ok"
    assert not any(line.startswith("demand ") for line in plain.lines)
    crashed = client.request(["ra"], MISMATCHED_PHI)
    assert crashed.status == "crash"
    again = client.request(["ra"], MISMATCHED_PHI)
    assert again.lines == crashed.lines  # the same text, none of the last crash's left over
    assert client.request([], SMALL).status == "ok"
    assert client.restarts == 0


def test_many_requests_outlast_a_worker(client):
    """More requests than one worker serves (WORKER_REQUESTS in bridge.c): each answered,
    by workers that replace each other."""
    for _ in range(300):
        assert client.request(["optimizer"], SMALL).lines[-1].startswith("i stop")
    assert client.restarts == 0


def test_requests_sent_at_once_are_each_answered(client):
    """The worker reads the requests itself, ahead of the one it serves; one that dies takes
    nothing of the ones after it (what it read is in memory it shares with the bridge), and
    a line outside any request is refused, not a crash."""
    assert client.request([], SMALL).status == "ok"
    requests = (("", SMALL), ("ra", MISMATCHED_PHI), ("optimizer", SMALL), ("ra", MISMATCHED_PHI),
                ("", SMALL))
    text = "".join(f"request 20000\npasses {passes}\n" + "\n".join(shader) + "\nend\n"
                   for passes, shader in requests) + "hello\n" + (
        "request 20000\npasses\n" + "\n".join(SMALL) + "\nend\n")
    client.process.stdin.write(text.encode())
    heads = [client._read_answer(20.0)[0] for _ in range(7)]
    assert heads == ["ok", "crash signal 6", "ok", "crash signal 6", "ok",
                     "error expected `request TIMEOUT_MS`", "ok"]
    assert client.request([], SMALL).status == "ok"
    assert client.restarts == 0
