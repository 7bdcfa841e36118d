"""The pieces of one schedule class, as the library templates of both backends print it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ScheduleClass:
    """Everything a template needs to write `class Schedule_<name>`."""

    name: str
    class_name: str
    members: list[str]
    constructor: list[str]
    step: list[str]
    inputs: list[str]
    results: list[str]
    states: list[str]
    volume: list[str]
    destructor: list[str]
    device: dict[str, list[str]] = field(default_factory=dict)  # CUDA: host <-> device copies
