"""A user's own `mpirun` of an application or script that embeds a generated library:
the launch environment without the Open MPI components that `coconetc run` chooses
(ONE_NODE_COMPONENTS), so that only what the library itself selects takes effect."""

from __future__ import annotations

from parafuse.emitters.toolchain.mpirun import ONE_NODE_COMPONENTS, launch_environment

# Open MPI's UCX one-sided component, probed where no one-node component was selected,
# prints "OSC UCX component priority set inside component query failed" per window.
UCX_NOISE = ("UCX", "component query failed")


def user_environment(ranks: int) -> dict[str, str]:
    env = launch_environment(ranks)
    for variable in ONE_NODE_COMPONENTS:
        env.pop(variable, None)
    return env


def assert_no_ucx_noise(stderr: str) -> None:
    noise = [line for line in stderr.splitlines() if any(word in line for word in UCX_NOISE)]
    assert not noise, "Open MPI probed UCX:\n" + "\n".join(noise)
