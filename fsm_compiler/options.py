"""Machine options (docs/fsm-language.md section 5): defaults, `options` blocks, command-line
overrides.

An `options` block applies to the machines after it; later blocks override earlier
ones key by key; command-line flags override both.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from parafuse.grammar.diagnostics import CompileError, Location
from parafuse.grammar.fsm_ast import FsmFile, Machine, OptionsBlock, OptionSetting

SCHEMES = ("auto", "seq", "enum", "fused", "spec", "hspec")
INTEGER_LIMITS = {
    "max_states": (1, 1 << 24),
    "max_fused_states": (1, 1 << 24),
    "lookback": (1, 1 << 20),
}
# The bounds of a run's shape (threads: 0 is OpenMP's default; chunks: 0 picks a count),
# which the CLI checks before it builds; the runtime's (cpp_runtime/fsm/core/shared_constants.hpp)
# are generated from these and from SCHEMES (emitters/fsm/shared_constants.py).
RUN_LIMITS = {"threads": (0, 4096), "chunks": (0, 1 << 20)}


@dataclass(frozen=True)
class MachineOptions:
    scheme: str = "auto"
    max_states: int = 65536
    max_fused_states: int = 65536
    lookback: int = 64


def option_names() -> list[str]:
    return [field.name for field in fields(MachineOptions)]


def _checked_value(setting: OptionSetting) -> str | int:
    key, value = setting.key.name, setting.value
    if key not in option_names():
        raise CompileError(f"unknown option '{key}'", setting.key.location,
                           hint="options are " + ", ".join(option_names()))
    if key == "scheme":
        if value not in SCHEMES:
            raise CompileError(f"unknown scheme '{value}'", setting.value_location,
                               hint="schemes are " + " | ".join(SCHEMES))
        return value
    low, high = INTEGER_LIMITS[key]
    if not value.isdigit():
        raise CompileError(f"option '{key}' needs a whole number, not '{value}'",
                           setting.value_location)
    number = int(value)
    if not low <= number <= high:
        raise CompileError(f"option '{key}' must be between {low} and {high}",
                           setting.value_location)
    return number


def apply_block(options: MachineOptions, block: OptionsBlock) -> MachineOptions:
    """`options` with the settings of `block` applied, each checked; a key set twice in one
    block is an error (a later block overrides an earlier one, key by key)."""
    seen: dict[str, OptionSetting] = {}
    for setting in block.settings:
        key = setting.key.name
        if key in seen:
            first = seen[key].key.location
            raise CompileError(f"option '{key}' is set twice in this block (first at line "
                               f"{first.line})", setting.key.location,
                               hint="keep one; a later options block may override it")
        seen[key] = setting
        options = replace(options, **{key: _checked_value(setting)})
    return options


def machine_options(
    fsm_file: FsmFile, overrides: dict[str, str | int] | None = None
) -> dict[str, MachineOptions]:
    """The effective options of every machine in `fsm_file`, by machine name."""
    current = MachineOptions()
    result: dict[str, MachineOptions] = {}
    for item in fsm_file.items:
        if isinstance(item, OptionsBlock):
            current = apply_block(current, item)
        else:
            result[item.name.name] = replace(current, **(overrides or {}))
    return result


def check_machine_names(fsm_file: FsmFile) -> None:
    """Machine names must be unique: each becomes its own namespace."""
    seen: dict[str, Machine] = {}
    for machine in fsm_file.machines:
        first = seen.setdefault(machine.name.name, machine)
        if first is not machine:
            raise CompileError(f"machine '{machine.name.name}' is defined twice",
                               machine.name.location,
                               hint=f"first defined at {first.name.location}")
    if not seen:
        start = Location(fsm_file.source.name, 1, 1, source=fsm_file.source)
        raise CompileError("the file defines no machine, pattern set or token set", start,
                           hint="add a 'machine NAME { ... }', 'patterns NAME { ... }' or "
                                "'tokens NAME { ... }' block")
