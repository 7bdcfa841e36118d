"""Command-line entry points: `coconetc` and `boostfsm`."""
