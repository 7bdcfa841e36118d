"""What `make demo` ran: each step's command and whether it worked, and the one closing line."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@dataclass
class DemoSteps:
    """The demo's steps in order; `failed` names those that did not work."""

    ran: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def run(self, step: str, args: list[str]) -> subprocess.CompletedProcess | None:
        """Run one command of step `step` from the repository (echoed as a user types it);
        None where it failed, its output then printed and the step counted as failed."""
        print("$ " + " ".join(_shown(arg) for arg in args), flush=True)
        result = subprocess.run(args, cwd=REPO, text=True, capture_output=True)
        if result.returncode != 0:
            print(result.stdout + result.stderr, end="")
            self.fail(step, f"exit code {result.returncode}")
            return None
        return result

    def fail(self, step: str, why: str) -> None:
        print(f"   FAILED: {step}: {why}", flush=True)
        self.failed.append(step)

    def done(self, step: str) -> None:
        if step not in self.failed:
            self.ran.append(step)

    def summary(self) -> str:
        total = len(self.ran) + len(self.failed)
        if not self.failed:
            return f"demo: all {total} steps ran"
        return (f"demo: {len(self.ran)} of {total} steps ran; {len(self.failed)} failed: "
                + ", ".join(self.failed))


def _shown(arg: str) -> str:
    """A command's argument as the demo prints it: the tools by name, not by path."""
    return Path(arg).name if arg.startswith(str(BIN)) else arg
