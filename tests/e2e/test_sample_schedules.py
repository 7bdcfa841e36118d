"""Every sample schedule gives the default schedule's results (docs/ccn-language.md section 13
tolerances)
at R = 1..5 with sizes that no R divides, over 3 steps."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from parafuse.ccn_compiler.comm_volume import bytes_per_rank
from parafuse.ccn_compiler.frontend import check_source
from parafuse.ccn_compiler.ranks import Topology
from parafuse.cli.coconetc import main
from tests.conftest import SAMPLE_SIZES, SAMPLES
from tests.schedule_compare import assert_same_results

SIZES = SAMPLE_SIZES
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}


def _cases():
    for path in sorted(SAMPLES.glob("*.ccn")):
        module = check_source(path.read_text(), path.name)
        for (program, schedule) in module.scheduled:
            yield pytest.param(path, program, schedule, id=f"{path.stem}-{schedule}")


@pytest.mark.parametrize("path,program,schedule", list(_cases()))
def test_schedule_equals_default(path, program, schedule) -> None:
    module = check_source(path.read_text(), path.name)
    default = module.programs[program]
    scheduled = module.scheduled[(program, schedule)]
    sizes = {n: SIZES[n] for n in default.size_vars}
    blocks = [g.blocks for g in default.groups]
    for ranks in range(1, 6):
        if any(ranks % k for k in blocks):
            continue
        assert_same_results(default, scheduled, ranks, sizes, 3, f"{schedule} at R={ranks}")


@pytest.mark.parametrize("path,program,schedule", list(_cases()))
def test_schedule_runs_from_the_command_line(path, program, schedule, tmp_path) -> None:
    """`coconetc run --schedule S` writes every result, sharded states as per-rank blocks;
    a value of one pipeline stage only on that stage's ranks."""
    module = check_source(path.read_text(), path.name)
    sizes = [a for n in module.programs[program].size_vars for a in ("--size", f"{n}={SIZES[n]}")]
    args = ["run", str(path), "--schedule", schedule, "-n", "2", *sizes, "--random",
            "--outputs", str(tmp_path), "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["schedule"] == schedule and summary["bytes_per_rank"] > 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    scheduled = module.scheduled[(program, schedule)]
    topology = Topology(2, {g.name: g.blocks for g in scheduled.groups})
    assert [e["name"] for e in manifest["outputs"]] == [n for n, _, _ in scheduled.result_types()]
    for entry, (name, _, vt) in zip(manifest["outputs"], scheduled.result_types(), strict=True):
        assert entry["name"] == name and entry["layout"] == str(vt.layout)
        holders = [r for r in range(2) if topology.holds(scheduled.placement(name), r)]
        assert entry["files"] == [f"{name}.rank{r}.npy" for r in holders]
        assert entry.get("stage") == (str(scheduled.placement(name)) if len(holders) < 2
                                      else None), entry
        arrays = [np.load(tmp_path / file) for file in entry["files"]]
        assert all(a.dtype.itemsize == DTYPE_BYTES[vt.dtype] for a in arrays), entry
        if vt.layout.kind == "sliced" and len(arrays) == 2:  # two blocks make the whole dim
            dim = vt.layout.dim
            assert sum(a.shape[dim] for a in arrays) == SIZES[vt.shape[dim]]


def test_split_moves_the_same_bytes_as_the_allreduce() -> None:
    """By the ring formulas, reducescatter + allgather send what the allreduce sent."""
    module = check_source((SAMPLES / "adam.ccn").read_text(), "adam.ccn")
    volumes = {}
    for schedule in ("default", "split_only"):
        program = module.scheduled_program("adam", schedule)
        volumes[schedule] = bytes_per_rank(program, Topology(4, {}), {"N": 1000})
    assert volumes["default"] == volumes["split_only"] == 3000
