"""A warm `boostfsm run --backend cpp` starts its runner without compiling the file again.

The build cache keeps an index from what decides a machine's runner to the runner built
from it, with the warnings its compile printed (shown again on every run, as a compile
would): the file's bytes, the machine asked for, the options that override the file's,
parafuse's own sources and the toolchain (compiler, CPU, $PARAFUSE_OPTIMIZE). Another
byte in the file, another option, another parafuse or compiler is another key; a key
whose runner is gone is compiled again. A set of a thousand rules takes a minute to
compile and render; a warm run of it starts scanning at once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from parafuse.emitters.toolchain.cmake import Toolchain, cache_root, writing_the_cache

PACKAGE = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = ("cli", "grammar", "ccn_compiler", "fsm_compiler", "emitters", "cpp_runtime")
SOURCE_SUFFIXES = {".py", ".j2", ".hpp", ".cpp", ".cuh", ".h", ".inc", ".lark", ".txt"}


@functools.cache
def sources_fingerprint() -> str:
    """One digest of every source file of the package that decides a project."""
    digest = hashlib.sha256()
    for folder in SOURCE_FOLDERS:
        for path in sorted((PACKAGE / folder).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def warm_key(path: str, machine: str | None, overrides: dict) -> str | None:
    """The index key of a run of `path` (None where the file cannot be read: the compile
    says why)."""
    try:
        text = Path(path).read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(text)
    digest.update(json.dumps([machine, sorted(overrides.items()), sources_fingerprint(),
                              Toolchain.current().fingerprint(),
                              os.environ.get("PARAFUSE_OPTIMIZE", "")]).encode())
    return digest.hexdigest()[:24]


def _entry(key: str) -> Path:
    return cache_root() / "fsm-warm-runs" / f"{key}.json"


@dataclass(frozen=True)
class WarmRun:
    """A run's key, and the warnings its compile printed (replayed on a warm run)."""

    key: str
    warnings: str = ""

    def record(self, runner: Path) -> None:
        with writing_the_cache():
            entry = _entry(self.key)
            entry.parent.mkdir(parents=True, exist_ok=True)
            temporary = entry.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"runner": str(runner), "warnings": self.warnings}))
            temporary.replace(entry)


def indexed_runner(key: str) -> tuple[Path, str] | None:
    """(runner, warnings) recorded for `key`, where that runner is still built."""
    try:
        recorded = json.loads(_entry(key).read_text())
    except (OSError, ValueError):
        return None
    runner = Path(recorded["runner"])
    return (runner, recorded["warnings"]) if runner.is_file() else None
