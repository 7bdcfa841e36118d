"""The corpus `bench/fsm_auto_corpus.py` judges `auto` on: machines of the classes users
have, each with an input of its kind, generated from seeds of their own (CORPUS_SEED and
up), apart from the cases `auto` was developed on (the samples' and bench/fsm_schemes.py's
inputs use seeds 7-19; the property tests theirs).

Classes: mode trackers (a handful of modes switched by rare trigger bytes, some counted:
bytes inside strings or comments), protocol keyword chains (a reset on any unexpected
byte), permutation and cyclic-group machines (paths never merge), random DFAs of 8 to 300
states, counters (decimal numbers modulo k, a byte counted modulo k), the repository's
samples and two real rule sets (rebar's regexes and Nosey Parker's rules).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "samples"), str(REPO / "bench")]

import fsm_ruleset_sources as sources  # noqa: E402
import inputs  # noqa: E402
from fsm_rulesets import rebar_input, stdlib_input  # noqa: E402

from parafuse.fsm_compiler.compiled import CompiledMachine  # noqa: E402
from parafuse.fsm_compiler.engines.engines import EngineSet  # noqa: E402
from parafuse.fsm_compiler.options import MachineOptions  # noqa: E402
from parafuse.fsm_compiler.pipeline import compile_file  # noqa: E402
from parafuse.grammar.diagnostics import Location, SourceFile  # noqa: E402

CORPUS_SEED = 90_000
TEXT = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz      ETAOINSHRDLU0123456789,.",
                     dtype=np.uint8)


@dataclass(frozen=True)
class Case:
    label: str
    kind: str  # the class, as the report groups them
    machine: CompiledMachine | EngineSet
    make_input: Callable[[int], bytes]  # bytes of the given size


def _machine(name: str, transitions: np.ndarray, byte_class: np.ndarray,
             state_tags: list[tuple[int, ...]], start: int = 0) -> CompiledMachine:
    states = transitions.shape[0]
    tags = max((max(t) for t in state_tags if t), default=-1) + 1
    return CompiledMachine(
        name=name, kind="explicit", state_names=tuple(f"s{i}" for i in range(states)),
        start=start, byte_class=byte_class.astype(np.uint8),
        transitions=transitions.astype(np.int32),
        tag_names=tuple(f"t{i}" for i in range(max(tags, 1))),
        state_tags=tuple(state_tags), options=MachineOptions(),
        location=Location(f"{name}.fsm", 1, 1))


def _text(rng: np.random.Generator, size: int, triggers: bytes = b"", rate: int = 0) -> bytes:
    """Text-like bytes, with `triggers` at one byte in `rate` on average."""
    data = rng.choice(TEXT, size)
    if triggers and rate:
        spots = rng.random(size) < 1.0 / rate
        data[spots] = rng.choice(np.frombuffer(triggers, dtype=np.uint8), int(spots.sum()))
    return data.tobytes()


def mode_tracker(seed: int, modes: int, rate: int) -> Case:
    """`modes` modes; each of modes + 1 trigger bytes sends some modes elsewhere; the
    bytes of half the modes are counted (like bytes inside strings or comments)."""
    rng = np.random.default_rng(seed)
    triggers = b"\"'/*#\\{}[]()<>;:@$%"[:modes + 1]
    byte_class = np.zeros(256, dtype=np.uint8)
    for k, byte in enumerate(triggers):
        byte_class[byte] = k + 1
    table = np.tile(np.arange(modes)[:, None], (1, len(triggers) + 1))
    for mode in range(modes):
        exits = rng.choice(len(triggers), int(rng.integers(1, 4)), replace=False) + 1
        for c in exits:
            table[mode, c] = int(rng.choice([m for m in range(modes) if m != mode]))
    tags = [((0,) if mode % 2 else ()) for mode in range(modes)]
    return Case(f"modes{modes}_r{rate}", "mode tracker",
                _machine(f"modes{modes}", table, byte_class, tags),
                lambda size: _text(np.random.default_rng(seed + 1), size, triggers, rate))


def keyword_chain(seed: int, length: int) -> Case:
    """A protocol keyword recognised in text: each expected byte advances, any other
    resets (to 1 on the first byte); the last state reports."""
    rng = np.random.default_rng(seed)
    word = bytes(rng.choice(TEXT[:26], length))
    byte_class = np.zeros(256, dtype=np.uint8)
    for number, byte in enumerate(sorted(set(word)), 1):
        byte_class[byte] = number
    classes = int(byte_class.max()) + 1
    table = np.zeros((length + 1, classes), dtype=np.int32)
    first = byte_class[word[0]]
    for state in range(length + 1):
        table[state, first] = 1
        if state < length:
            table[state, byte_class[word[state]]] = state + 1
    tags = [()] * length + [(0,)]
    text_rng = np.random.default_rng(seed + 1)

    def make(size: int) -> bytes:
        data = bytearray(_text(text_rng, size))
        for at in text_rng.integers(0, max(1, size - length), size // 4096):
            data[at:at + length] = word
        return bytes(data[:size])
    return Case(f"keyword{length}", "protocol chain",
                _machine(f"keyword{length}", table, byte_class, tags), make)


def permutation(seed: int, states: int, classes: int, cyclic: bool) -> Case:
    """Each class permutes the states (a random permutation, or a rotation: a cyclic group
    whose fused DFA has `states` states); paths never merge."""
    rng = np.random.default_rng(seed)
    columns = [np.roll(np.arange(states), int(rng.integers(0, states))) if cyclic
               else rng.permutation(states) for _ in range(classes)]
    table = np.stack(columns, axis=1)
    byte_class = (np.arange(256) % classes).astype(np.uint8)
    tags = [((0,) if s == 0 else ()) for s in range(states)]
    label = f"{'cyclic' if cyclic else 'perm'}{states}x{classes}"
    return Case(label, "group" if cyclic else "permutation",
                _machine(label, table, byte_class, tags),
                lambda size: np.random.default_rng(seed + 1).integers(
                    0, 256, size, dtype=np.uint8).tobytes())


def random_dfa(seed: int, states: int, classes: int, skewed: bool) -> Case:
    """Uniformly random targets; a third of the states report; random or skewed bytes."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, states, (states, classes))
    byte_class = np.sort(rng.integers(0, classes, 256)).astype(np.uint8)
    byte_class[:classes] = np.arange(classes)
    tags = [((0,) if rng.random() < 0.33 else ()) for _ in range(states)]

    def make(size: int) -> bytes:
        data_rng = np.random.default_rng(seed + 1)
        if not skewed:
            return data_rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        weights = 1.0 / np.arange(1, 257) ** 1.2
        return data_rng.choice(256, size, p=weights / weights.sum()).astype(np.uint8).tobytes()
    label = f"random{states}x{classes}{'s' if skewed else ''}"
    return Case(label, "random DFA", _machine(label, table, byte_class, tags), make)


def decimal_modulo(seed: int, k: int) -> Case:
    """Decimal numbers, one per line, modulo k: a newline resets; state 0 reports."""
    byte_class = np.full(256, 10, dtype=np.uint8)
    byte_class[ord("0"):ord("9") + 1] = np.arange(10)
    table = np.zeros((k, 11), dtype=np.int32)
    for value in range(k):
        table[value, :10] = (10 * value + np.arange(10)) % k
    tags = [((0,) if s == 0 else ()) for s in range(k)]

    def make(size: int) -> bytes:
        rng = np.random.default_rng(seed + 1)
        digits = rng.integers(ord("0"), ord("9") + 1, size, dtype=np.uint8)
        digits[rng.random(size) < 1 / 12] = ord("\n")
        return digits.tobytes()
    return Case(f"decimal_mod{k}", "counter", _machine(f"mod{k}", table, byte_class, tags), make)


def byte_count_modulo(seed: int, k: int) -> Case:
    """How many `e` bytes, modulo k (a cycle: paths never merge)."""
    byte_class = np.zeros(256, dtype=np.uint8)
    byte_class[ord("e")] = 1
    table = np.stack([np.arange(k), (np.arange(k) + 1) % k], axis=1)
    tags = [((0,) if s == 0 else ()) for s in range(k)]
    return Case(f"count_e_mod{k}", "counter", _machine(f"count{k}", table, byte_class, tags),
                lambda size: _text(np.random.default_rng(seed + 1), size))


def samples() -> list[Case]:
    found = []
    for path in sorted((REPO / "samples").glob("*.fsm")):
        compiled = compile_file(SourceFile(str(path), path.read_text(encoding="latin-1")))
        found.append(Case(path.stem, "sample", compiled.machines[0],
                          inputs.GENERATORS[path.stem]))
    return found


def rule_sets() -> list[Case]:
    found = []
    for label, rules, make in (("rebar", sources.rebar_rules(), rebar_input),
                               ("noseyparker", sources.noseyparker_rules(),
                                lambda size: stdlib_input(size, []))):
        text = sources.fsm_source(label, sources.parsable(rules))
        machine = compile_file(SourceFile(f"{label}.fsm", text)).machines[0]
        found.append(Case(label, "rule set", machine, make))
    return found


def corpus() -> list[Case]:
    """Every case, seeds CORPUS_SEED and up (fixed, so that runs compare)."""
    seed = iter(range(CORPUS_SEED, CORPUS_SEED + 10_000, 10))
    cases = [mode_tracker(next(seed), modes, rate)
             for modes in (3, 5, 8, 13) for rate in (10, 60, 400)]
    cases += [keyword_chain(next(seed), length) for length in (4, 8, 16)]
    cases += [permutation(next(seed), states, classes, cyclic)
              for states, classes, cyclic in ((4, 4, False), (6, 8, False), (12, 4, False),
                                              (20, 16, False), (5, 8, True), (16, 4, True),
                                              (60, 8, True), (200, 16, True))]
    cases += [random_dfa(next(seed), states, classes, skewed)
              for states, classes, skewed in (
                  (8, 4, False), (8, 64, True), (12, 16, False), (16, 4, True), (16, 64, False),
                  (24, 16, True), (32, 4, False), (32, 64, True), (48, 16, False),
                  (64, 4, True), (64, 64, False), (96, 16, True), (128, 4, False),
                  (128, 64, True), (160, 16, False), (200, 4, True), (256, 16, False),
                  (256, 64, True), (300, 4, False), (300, 64, True))]
    cases += [decimal_modulo(next(seed), k) for k in (3, 7, 13, 31, 64, 97)]
    cases += [byte_count_modulo(next(seed), k) for k in (2, 5, 16, 64)]
    return cases + samples() + rule_sets()
