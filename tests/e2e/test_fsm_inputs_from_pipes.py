"""`boostfsm run` and `analyze --input` take inputs as Unix tools do: a FIFO, a shell's
`<(command)` (`/dev/fd/N`) and `-` (standard input), on the C++ backend as on the
reference. A FIFO hung (the CLI opened and closed it to check it, and its writer died of
SIGPIPE) and `<(cat text)` failed ("cannot read input '/dev/fd/63'")."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.required_tools import require_cxx

BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
DIV7 = str(REPO / "samples" / "div7.fsm")
JSON_TOKENS = str(REPO / "samples" / "tokens" / "json_tokens.fsm")
TEXT = {DIV7: b"0110101110011" * 997,
        JSON_TOKENS: b'{"a": [1, 2.5, true, null], "b": "x\\"y"}\n' * 301}
SEEN = ("counts", "final_state", "end", "bytes", "accepted", "matches")


def result(stdout: str) -> dict:
    """What a run found, without its timing and scheme."""
    payload = json.loads(stdout)
    return {key: payload[key] for key in SEEN if key in payload}


def boostfsm(*args: str, stdin: bytes | None = None, shell: bool = False):
    command = ["bash", "-c", " ".join(args)] if shell else [BOOSTFSM, *args]
    done = subprocess.run(command, input=stdin, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


@pytest.fixture(params=[DIV7, JSON_TOKENS], ids=["machine", "token_set"])
def fsm(request, tmp_path) -> tuple[str, Path]:
    """The file and a regular file holding its text, whose result the pipes must give."""
    require_cxx()
    text = tmp_path / "text"
    text.write_bytes(TEXT[request.param])
    return request.param, text


def feed_fifo(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(fifo, "wb") as pipe:  # waits for the reader
            pipe.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


@pytest.mark.parametrize("backend", ["cpp", "reference"])
def test_a_fifo_is_read_once_by_the_runner(fsm, tmp_path, backend) -> None:
    file, text = fsm
    expected = result(boostfsm("run", file, str(text), "--json", "--backend", backend))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, text.read_bytes())
    try:
        assert result(boostfsm("run", file, str(fifo), "--json", "--backend", backend)) == expected
        writer.join(timeout=60)
        assert not writer.is_alive()
    finally:
        if writer.is_alive():  # release a writer nobody read
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))


@pytest.mark.parametrize("backend", ["cpp", "reference"])
def test_a_process_substitution_and_standard_input(fsm, backend) -> None:
    file, text = fsm
    expected = result(boostfsm("run", file, str(text), "--json", "--backend", backend))
    quoted = [shlex.quote(part) for part in (BOOSTFSM, file, str(text))]
    substituted = boostfsm(quoted[0], "run", quoted[1], f"<(cat {quoted[2]})", "--json",
                           "--backend", backend, shell=True)
    assert result(substituted) == expected
    piped = boostfsm("run", file, "-", "--json", "--backend", backend, stdin=text.read_bytes())
    assert result(piped) == expected


def test_analyze_takes_its_sample_from_a_fifo(fsm, tmp_path) -> None:
    """`analyze --input` reads the sample and runs the runner over it again (auto's own
    choice on it): from a FIFO, the second read is of a copy."""
    file, text = fsm
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, text.read_bytes())
    try:
        analysis = json.loads(boostfsm("analyze", file, "--input", str(fifo), "--json"))
    finally:
        if writer.is_alive():
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert len(analysis) == 1 and str(fifo) in json.dumps(analysis)
