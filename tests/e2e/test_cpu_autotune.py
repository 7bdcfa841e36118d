"""`coconetc build --autotune`: every candidate timed and recorded, the choice among them,
never slower than the unfused default in the autotuner's own measurements."""

from __future__ import annotations

import json

from click.testing import CliRunner

from parafuse.cli.coconetc import main
from parafuse.emitters.autotune import CHUNK_CHOICES
from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.conftest import SAMPLES


def test_autotune_records_every_candidate_and_keeps_the_fastest(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PARAFUSE_TUNE_ROUNDS", "1")
    out = tmp_path / "sgd"
    result = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--autotune", "-n",
                                       "2", "--size", "N=20011", "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    tuning = json.loads((out / "tuning.json").read_text())
    names = set(tuning["candidates"])
    assert {"default", "split_only", "sliced", "zero", "fused"} <= names
    assert {f"fused.c{k}" for k in CHUNK_CHOICES} <= names
    medians = {n: c["median_ms"] for n, c in tuning["candidates"].items()}
    chosen = tuning["chosen"]
    assert medians[chosen] <= medians["default"]
    assert chosen == "default" or medians[chosen] == min(medians.values())
    done = run_ranks(out, "sgd", 2, ["--size", "N=101", "--random", "--json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schedule"] == chosen  # the runner's default


def test_autotune_needs_ranks_and_sizes(tmp_path) -> None:
    result = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--autotune", "-o",
                                       str(tmp_path / "x")])
    assert result.exit_code == 1
    assert "--autotune needs -n R and --size" in result.output
