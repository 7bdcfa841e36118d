"""`make demo` (parafuse.cli.demo) runs on every sample and ends with one line that says
what ran and what failed: the whole demo at small sizes, and a sample without demo sizes
failing it by name."""

from __future__ import annotations

import subprocess
import sys

import pytest

from parafuse.cli import demo
from parafuse.cli.demo_fsm import fsm_samples
from parafuse.cli.demo_steps import DemoSteps
from tests.required_tools import require_cxx


@pytest.mark.slow
def test_demo_runs_every_sample_and_says_so() -> None:
    require_cxx()
    done = subprocess.run([sys.executable, "-m", "parafuse.cli.demo", "--small"],
                          capture_output=True, text=True)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    # each .ccn sample, Adam's two CPU schedules, the inputs, each .fsm sample, the lexer
    steps = len(demo.ccn_samples()) + 2 + 1 + len(fsm_samples()) + 1
    assert lines[-1] == f"demo: all {steps} steps ran", lines[-5:]
    for sample in demo.ccn_samples():
        assert f"$ coconetc run samples/{sample.name} -n 2" in done.stdout, sample
    for sample in fsm_samples():
        assert f"$ boostfsm run samples/{sample.name} " in done.stdout, sample


def test_every_ccn_sample_has_demo_sizes() -> None:
    assert {sample.stem for sample in demo.ccn_samples()} <= set(demo.CCN_SIZES)


def test_a_sample_without_sizes_fails_the_demo_by_name(monkeypatch, tmp_path, capsys) -> None:
    adam = next(s for s in demo.ccn_samples() if s.stem == "adam")
    monkeypatch.setattr(demo, "ccn_samples", lambda: [adam.with_name("newmodel.ccn"), adam])
    steps = DemoSteps()
    demo.demo_coconetc(steps, tmp_path, small=True)
    assert steps.failed == ["coconetc run newmodel.ccn"]
    assert steps.ran == ["coconetc run adam.ccn"]
    assert "no demo sizes for samples/newmodel.ccn" in capsys.readouterr().out
    assert steps.summary() == "demo: 1 of 2 steps ran; 1 failed: coconetc run newmodel.ccn"
