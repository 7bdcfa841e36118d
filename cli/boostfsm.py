"""`boostfsm`: the finite-state-machine compiler (arrives with the .fsm front-end issue)."""

from __future__ import annotations

import click


@click.group(help="Compile finite-state machines (.fsm) to parallel C++.")
def main() -> None:
    pass


if __name__ == "__main__":
    main()
