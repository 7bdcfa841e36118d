"""Run token sets through every C++ scheme with the token-set driver (one build for all).

`assert_tokens_equal_reference(cases, work)` writes each case's blob and input, runs
every configuration of every case in one process, and checks that `seq` gives the
reference tokenizer's tokens and counts and that every configuration gives `seq`'s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from parafuse.emitters.fsm.token_blob import TokenHints, token_blob
from parafuse.emitters.fsm.token_project import token_driver
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.tokens.reference_tokenizer import kind_counts, tokenize
from parafuse.fsm_compiler.tokens.token_sets import CompiledTokenSet
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES

SCHEMES = ("seq", "enum", "fused", "spec", "hspec", "auto")
THREADS = (1, 2, 3)


def configurations(input_bytes: int, threads=THREADS, schemes=SCHEMES) -> list[str]:
    """Chunk counts 1, 2, 7, 64 and more than the input's bytes (a boundary after every byte)."""
    chunk_counts = sorted({1, 2, 7, 64, input_bytes + 5})
    return [f"{scheme}:{count}:{chunks}" for scheme in schemes for count in threads
            for chunks in chunk_counts]


def write_manifest(cases: list[tuple[CompiledTokenSet, bytes]], work: Path,
                   hints: TokenHints | None = None, prefix: str = "case") -> Path:
    """Each case's blob and input under `work`, and the manifest naming them (a drivers'
    `BLOB INPUT` a line)."""
    manifest, lines = work / f"{prefix}_manifest.txt", []
    for index, (token_set, data) in enumerate(cases):
        blob, data_path = work / f"{prefix}{index}.blob", work / f"{prefix}{index}.input"
        blob.write_bytes(token_blob(token_set, hints or TokenHints()))
        data_path.write_bytes(data)
        lines.append(f"{blob} {data_path}")
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def sample_cases(real_bytes: int = 6000) -> list[tuple[CompiledTokenSet, bytes]]:
    """Every token-set sample over empty, one-byte, random and real inputs."""
    sys.path.insert(0, str(SAMPLES / "tokens"))
    import token_inputs

    cases = []
    noise = np.random.default_rng(5).integers(0, 256, 2000, dtype=np.uint8).tobytes()
    for name, generate in token_inputs.GENERATORS.items():
        path = SAMPLES / "tokens" / f"{name}.fsm"
        token_set = compile_file(SourceFile(str(path), path.read_text())).machines[0]
        real = generate(real_bytes)
        cases += [(token_set, data) for data in (b"", real[:1], noise, real)]
    return cases


def assert_tokens_equal_reference(cases: list[tuple[CompiledTokenSet, bytes]], work: Path,
                                  hints: TokenHints | None = None, sanitize: str = "") -> None:
    manifest = write_manifest(cases, work, hints)
    longest = max((len(data) for _, data in cases), default=0)
    done = subprocess.run([str(token_driver(sanitize)), str(manifest),
                           *configurations(longest)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(cases)
    for (token_set, data), result in zip(cases, results, strict=True):
        expected = tokenize(token_set, data)
        got = [(kind, start, end) for start, end, kind in result["tokens"]]
        assert got == expected, f"{token_set.name} seq on {data[:80]!r}"
        assert result["counts"] == list(kind_counts(token_set, expected).values())
        assert result["differs"] == [], f"{token_set.name} on {data[:80]!r}"


def auto_choices(cases: list[tuple[CompiledTokenSet, bytes]], work: Path,
                 configs: tuple[str, ...] = ("auto:2:0",)) -> list[list[list[str]]]:
    """Per case, what each `auto` configuration ran and why ([config, scheme, reason]);
    every configuration's tokens and counts are checked equal to seq's."""
    manifest = write_manifest(cases, work, prefix="auto")
    done = subprocess.run([str(token_driver()), str(manifest), *configs], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [result["differs"] for result in results] == [[] for _ in cases]
    return [result["auto"] for result in results]
