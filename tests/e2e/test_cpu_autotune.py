"""`coconetc build --autotune`: every candidate timed and recorded, the best median chosen
(times planted, so that the choice itself is checked) and made the runner's default."""

from __future__ import annotations

import json

from click.testing import CliRunner

from parafuse.cli.coconetc import main
from parafuse.emitters import autotune
from parafuse.emitters.autotune import CHUNK_CHOICES
from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.conftest import SAMPLES

# Each candidate's runs (ms), one per round: fused.c16 has the best median but the worst
# mean, fused.c4 the best mean; the real timing runs once per candidate all the same.
PLANTED = {"default": [5.0, 5.0, 5.0], "fused.c16": [1.0, 30.0, 1.0], "fused.c4": [2.0] * 3}


def test_autotune_records_every_candidate_and_keeps_the_fastest(tmp_path, monkeypatch) -> None:
    """Times are planted (tests never depend on timing): the autotuner must pick the best
    median, record every run, and make it the built runner's default."""
    monkeypatch.setattr(autotune, "ROUNDS", 3)
    real_time, timed = autotune._time, []

    def planted_time(project, program, name, ranks, sizes) -> float:
        if name not in timed:  # the real runner, once per candidate
            assert real_time(project, program, name, ranks, sizes) > 0
        timed.append(name)
        return PLANTED.get(name, [4.0] * 3)[timed.count(name) - 1]

    monkeypatch.setattr(autotune, "_time", planted_time)
    out = tmp_path / "sgd"
    result = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--autotune", "-n",
                                       "2", "--size", "N=20011", "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    tuning = json.loads((out / "tuning.json").read_text())
    names = set(tuning["candidates"])
    assert {"default", "split_only", "sliced", "zero", "fused"} <= names
    assert {f"fused.c{k}" for k in CHUNK_CHOICES} <= names
    assert sorted(timed) == sorted(3 * list(names))
    assert tuning["candidates"]["fused.c16"]["runs_ms"] == PLANTED["fused.c16"]
    assert tuning["chosen"] == "fused.c16"
    done = run_ranks(out, "sgd", 2, ["--size", "N=101", "--random", "--json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schedule"] == "fused.c16"  # the runner's default


def test_autotune_needs_ranks_and_sizes(tmp_path) -> None:
    result = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--autotune", "-o",
                                       str(tmp_path / "x")])
    assert result.exit_code == 1
    assert "--autotune needs -n R and --size" in result.output
