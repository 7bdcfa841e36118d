"""`boostfsm run` starts the generated runner with OpenMP's waiting threads asleep at once
(OMP_WAIT_POLICY=passive, emitters/toolchain/openmp.py) unless the user chose a policy; libgomp
says which it took when OMP_DISPLAY_ENV=VERBOSE (GOMP_SPINCOUNT 0: no spinning)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from parafuse.cli import boostfsm
from tests.conftest import SAMPLES


@pytest.mark.parametrize(("policy", "spins"), [(None, False), ("active", True)])
def test_runner_threads_sleep_unless_the_user_says(policy, spins, tmp_path, monkeypatch,
                                                   capfd) -> None:
    data = tmp_path / "in.txt"
    data.write_bytes(b"1101" * 100)
    if policy is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", policy)
    monkeypatch.setenv("OMP_DISPLAY_ENV", "VERBOSE")
    result = CliRunner().invoke(boostfsm.main, ["run", str(SAMPLES / "div7.fsm"), str(data),
                                                "--json"], catch_exceptions=False)
    _, err = capfd.readouterr()  # the runner writes to the process's own descriptors
    assert result.exit_code == 0, result.output
    assert ("GOMP_SPINCOUNT = '0'" in err) != spins, err
    assert f"OMP_WAIT_POLICY = '{'ACTIVE' if spins else 'PASSIVE'}'" in err, err
