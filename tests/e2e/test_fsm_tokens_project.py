"""A generated token-set project end to end: the runner's JSON and --tokens against the
reference tokenizer, --tokens-out (a numpy file; nothing written when the run fails),
`boostfsm run` on both backends, `boostfsm analyze`'s fall-in-step report, and the
Python module's structured array (shared with the library, not copied)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from parafuse.emitters.fsm.token_project import TokenHints, cached_token_project
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.tokens.reference_tokenizer import kind_counts, tokenize
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import REPO, SAMPLES
from tests.required_tools import require_cxx

sys.path.insert(0, str(SAMPLES / "tokens"))
import token_inputs  # noqa: E402

BOOSTFSM = str(sys.executable).rsplit("/", 1)[0] + "/boostfsm"
# as json_project names it, so that the CLI's builds (relative to the repository) are that one
JSON_SAMPLE = "samples/tokens/json_tokens.fsm"


def sample_token_set(name: str):
    path = SAMPLES / "tokens" / f"{name}.fsm"
    return compile_file(SourceFile(str(path), path.read_text(encoding="latin-1"))).machines[0]


@pytest.fixture(scope="module")
def json_project():
    require_cxx()
    return cached_token_project(sample_token_set("json_tokens"), JSON_SAMPLE,
                                TokenHints(), python=True)


@pytest.fixture(scope="module")
def json_input(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokens") / "input.json"
    path.write_bytes(token_inputs.json_tokens(1 << 15) + b" tru -")
    return path


def _expected(data: bytes):
    token_set = sample_token_set("json_tokens")
    tokens = tokenize(token_set, data)
    names = token_set.kind_names
    return kind_counts(token_set, tokens), [[s, e, names[k]] for k, s, e in tokens], tokens


@pytest.mark.parametrize("scheme", ["seq", "hspec", "auto"])
def test_runner_tokens_equal_reference(json_project, json_input, scheme) -> None:
    done = subprocess.run([str(json_project / "build" / "json_tokens_run"), str(json_input),
                           "--json", "--tokens", "--scheme", scheme, "--threads", "2"],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    counts, listed, _ = _expected(json_input.read_bytes())
    assert result["counts"] == counts and result["tokens"] == listed
    assert result["counts"]["error"] == 2  # `tru` and `-`
    assert result["end"] == result["bytes"] == json_input.stat().st_size
    assert "final_state" in result and result["final_state"] is None  # the spec's fields
    assert result["requested_scheme"] == scheme and result["reason"]


def test_runner_help_prints_the_usage_and_exits_0(json_project) -> None:
    done = subprocess.run([str(json_project / "build" / "json_tokens_run"), "--help"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: json_tokens_run INPUT ") and "--tokens-out" in done.stdout


def test_tokens_out_writes_npy_and_nothing_on_failure(json_project, json_input, tmp_path) -> None:
    runner = str(json_project / "build" / "json_tokens_run")
    out = tmp_path / "tokens.npy"
    subprocess.run([runner, str(json_input), "--tokens-out", str(out), "--scheme", "spec"],
                   check=True, capture_output=True)
    records = np.load(out)
    _, _, tokens = _expected(json_input.read_bytes())
    assert records.dtype.names == ("start", "end", "kind")
    assert list(zip(records["kind"].tolist(), records["start"].tolist(),
                    records["end"].tolist())) == tokens
    failed = tmp_path / "missing" / "tokens.npy"
    done = subprocess.run([runner, "no/such/input", "--tokens-out", str(out.with_name("x.npy"))],
                          capture_output=True, text=True)
    assert done.returncode == 1 and not out.with_name("x.npy").exists()
    done = subprocess.run([runner, str(json_input), "--tokens-out", str(failed)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "cannot write" in done.stderr
    assert not failed.parent.exists()


def test_tokens_out_on_a_full_disk_is_absent_and_says_why(json_input, json_project,
                                                          full_disk) -> None:
    """--tokens-out on a full disk: no file (the temporary one removed), one line with the
    system's reason, exit 1 (the reason was missing)."""
    runner = str(json_project / "build" / "json_tokens_run")
    out = full_disk / "tokens.npy"
    done = subprocess.run([runner, str(json_input), "--tokens-out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"json_tokens_run: error: cannot write {out}: No space left on "
                           "device\n")
    assert list(full_disk.iterdir()) == []


def test_boostfsm_run_backends_agree(json_input, json_project) -> None:
    """`boostfsm run` finds json_project's build (the same source name, and more: the Python
    module) and uses it."""
    require_cxx()
    results = []
    for backend in ("reference", "cpp"):
        done = subprocess.run([BOOSTFSM, "run", JSON_SAMPLE, str(json_input), "--tokens",
                               "--json", "--backend", backend], capture_output=True, text=True,
                              check=True, cwd=REPO)
        results.append(json.loads(done.stdout))
    assert results[0]["tokens"] == results[1]["tokens"]
    assert results[0]["counts"] == results[1]["counts"]


def test_analyze_reports_fall_in_step(json_input, json_project) -> None:
    done = subprocess.run([BOOSTFSM, "analyze", JSON_SAMPLE, "--input", str(json_input),
                           "--json"], capture_output=True, text=True, check=True, cwd=REPO)
    report = json.loads(done.stdout)[0]
    fall = report["fall_in_step"]
    assert report["kind"] == "tokens" and fall["positions"] > 0
    assert 0 <= fall["median"] <= fall["p90"] and fall["never"] == 0
    assert report["auto_scheme"] in ("seq", "enum", "spec", "hspec"), report["auto_reason"]


def test_analyze_says_what_the_runner_picks(json_project, tmp_path) -> None:
    """`analyze --input` prints the runner's own `auto` on that input: its probe on an
    input of 1 MiB or more, the untrained rule below (the same scheme and reason), at
    the default thread count (2 here; the tests' default of 1 would always say seq)."""
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    big = tmp_path / "big.json"
    big.write_bytes(token_inputs.json_tokens(3 << 19))
    small = tmp_path / "small.json"
    small.write_bytes(token_inputs.json_tokens(1 << 14))
    for path, said in ((big, "measured at 16 positions"), (small, "no training measurement")):
        report = json.loads(subprocess.run(
            [BOOSTFSM, "analyze", JSON_SAMPLE, "--input", str(path), "--json"],
            capture_output=True, text=True, check=True, env=env, cwd=REPO).stdout)[0]
        runner = json.loads(subprocess.run(
            [str(json_project / "build" / "json_tokens_run"), str(path), "--scheme", "auto",
             "--json"], capture_output=True, text=True, check=True, env=env).stdout)
        assert (report["auto_scheme"], report["auto_reason"]) == (runner["scheme"],
                                                                  runner["reason"])
        assert said in report["auto_reason"]
    text = subprocess.run([BOOSTFSM, "analyze", JSON_SAMPLE, "--input", str(big)],
                          capture_output=True, text=True, check=True, env=env, cwd=REPO).stdout
    assert "(the runner on this sample)" in text


def test_python_module_returns_structured_array_without_copy(json_project, json_input) -> None:
    sys.path.insert(0, str(json_project / "build"))
    try:
        module = importlib.import_module("json_tokens")
    finally:
        sys.path.pop(0)
    data = np.frombuffer(json_input.read_bytes(), dtype=np.uint8)
    counts, _, tokens = _expected(data.tobytes())
    assert module.kinds == ["string", "number", "literal", "punct", "error"]
    for scheme in ("seq", "enum", "hspec"):
        result = module.run(data, threads=2, scheme=scheme, tokens=True)
        array = result["tokens"]
        assert array.dtype.names == ("start", "end", "kind") and array.dtype.itemsize == 24
        assert array.dtype["start"] == np.uint64 and array.dtype["kind"] == np.uint16
        assert not array.flags.owndata and array.base is not None  # the library's vector
        assert list(zip(array["kind"].tolist(), array["start"].tolist(),
                        array["end"].tolist())) == tokens
        assert result["counts"] == counts and result["scheme"] == scheme
    assert "tokens" not in module.run(b"[1, 2]")
    assert len(module.run(b"", tokens=True)["tokens"]) == 0
    for threads in (-1, 4097):  # as for machines (a negative count ran as the default)
        with pytest.raises(ValueError, match=f"threads must be from 0 to 4096 .*, not {threads}"):
            module.run(b"[1, 2]", threads=threads)
