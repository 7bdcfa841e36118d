"""What each sample declares and outputs, how the tests fill its inputs, and its oracle.

Declarations are copied by hand from `samples/*.ccn` (the tests check the manifest
the run writes against them). Sizes are chosen so that no sliced dim divides by
2, 3 or 4, and megatron's K = 5 leaves rank 3 of 4 an empty block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np
from numpy_oracles import (
    Inputs,
    Oracle,
    adam_oracle,
    lamb_oracle,
    megatron_oracle,
    pipeline_oracle,
    send_ring_oracle,
    sgd_oracle,
)

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
NUMPY_DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
                "f64": np.float64, "i32": np.int32, "i64": np.int64}


@dataclass(frozen=True)
class Declaration:
    """An `input` or `state` of a sample, and the range the tests draw its values from."""

    name: str
    dtype: str
    dims: tuple[str, ...]
    layout: str
    low: float = -1.0
    high: float = 1.0

    def shape(self, sizes: dict[str, int]) -> tuple[int, ...]:
        return tuple(sizes[d] for d in self.dims)


@dataclass(frozen=True)
class Output:
    """An output or updated state: declared dtype, dims, layout, and the tolerance it takes."""

    name: str
    dtype: str
    dims: tuple[str, ...]
    layout: str
    tolerance: str
    stage: str | None = None  # the pipeline stage holding it (the manifest's "stage")


@dataclass(frozen=True)
class SampleCase:
    sample: str
    program: str
    sizes: dict[str, int]
    declarations: tuple[Declaration, ...]
    outputs: tuple[Output, ...]
    oracle: Oracle
    rank_counts: tuple[int, ...] = (1, 2, 3, 4)
    params: dict[str, float] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return SAMPLES / self.sample


def optimizer_declarations(gradient_dtype: str, states: tuple[str, ...]) -> tuple:
    gradient = Declaration("g", gradient_dtype, ("N",), "local")
    return (gradient,) + tuple(
        Declaration(s, "f32", ("N",), "replicated", *((0.0, 1.0) if s == "v" else ()))
        for s in states)


def optimizer_outputs(gradient_dtype: str, states: tuple[str, ...]) -> tuple[Output, ...]:
    return tuple(Output(s, "f32", ("N",), "replicated", gradient_dtype) for s in states)


CASES: dict[str, SampleCase] = {
    "adam": SampleCase(
        "adam.ccn", "adam", {"N": 1001},
        optimizer_declarations("f16", ("w", "m", "v")),
        optimizer_outputs("f16", ("w", "m", "v")), adam_oracle, params={"lr": 0.01}),
    "lamb": SampleCase(
        "lamb.ccn", "lamb", {"N": 1001},
        optimizer_declarations("f16", ("w", "m", "v")),
        optimizer_outputs("f16", ("w", "m", "v")), lamb_oracle, params={"wd": 0.05}),
    "sgd": SampleCase(
        "sgd.ccn", "sgd", {"N": 1001},
        optimizer_declarations("bf16", ("w", "buf")),
        optimizer_outputs("bf16", ("w", "buf")), sgd_oracle, params={"momentum": 0.8}),
    "megatron": SampleCase(
        "megatron.ccn", "megatron", {"B": 3, "K": 5, "H": 7},
        (Declaration("x", "f16", ("B", "K"), "sliced(-1)"),
         Declaration("w", "f16", ("K", "H"), "sliced(0)"),
         Declaration("bias", "f16", ("H",), "replicated"),
         Declaration("resid", "f16", ("B", "H"), "replicated")),
        (Output("out", "f16", ("B", "H"), "replicated", "f16"),),
        megatron_oracle, params={"p": 0.3}),
    "send_ring": SampleCase(
        "send_ring.ccn", "send_ring", {"B": 3, "H": 5},
        (Declaration("x", "f32", ("B", "H"), "replicated"),
         Declaration("w", "f32", ("H", "H"), "replicated"),
         Declaration("u", "f32", ("B", "H"), "local"),
         Declaration("acc", "f32", ("B", "H"), "local")),
        (Output("recv", "f32", ("B", "H"), "replicated in stage", "f32"),
         Output("acc", "f32", ("B", "H"), "local", "f32")),
        send_ring_oracle, rank_counts=(2, 4)),
    "pipeline": SampleCase(
        "pipeline.ccn", "pipeline", {"B": 3, "D": 7, "F": 5, "G": 9},
        (Declaration("x", "bf16", ("B", "D"), "replicated in stage"),
         Declaration("w1", "bf16", ("D", "F"), "sliced(1) in stage"),
         Declaration("b1", "bf16", ("F",), "replicated in stage"),
         Declaration("w2", "bf16", ("F", "D"), "sliced(0) in stage"),
         Declaration("g1", "bf16", ("D",), "replicated in stage"),
         Declaration("w3", "bf16", ("D", "G"), "sliced(1) in stage"),
         Declaration("b3", "bf16", ("G",), "replicated in stage"),
         Declaration("w4", "bf16", ("G", "D"), "sliced(0) in stage"),
         Declaration("g2", "bf16", ("D",), "replicated in stage")),
        (Output("out", "bf16", ("B", "D"), "replicated in stage", "bf16", stage="stage[1]"),),
        pipeline_oracle, rank_counts=(2, 4)),
}


def draw(declaration: Declaration, shape: tuple[int, ...], rng: np.random.Generator):
    values = rng.uniform(declaration.low, declaration.high, size=shape)
    return values.astype(NUMPY_DTYPES[declaration.dtype])


def make_inputs(case: SampleCase, ranks: int, rng: np.random.Generator,
                sizes: dict[str, int] | None = None) -> Inputs:
    """Random inputs: one tensor per rank for `local` declarations, the whole one otherwise."""
    sizes = sizes or case.sizes
    inputs: Inputs = {}
    for declaration in case.declarations:
        shape = declaration.shape(sizes)
        if declaration.layout == "local":
            inputs[declaration.name] = [draw(declaration, shape, rng) for _ in range(ranks)]
        else:
            inputs[declaration.name] = draw(declaration, shape, rng)
    return inputs


def write_inputs(inputs: Inputs, directory: Path) -> None:
    """Runner contract: `NAME.npy` (whole tensor) or `NAME.rankR.npy` (local, per rank)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in inputs.items():
        if isinstance(value, list):
            for rank, tensor in enumerate(value):
                np.save(directory / f"{name}.rank{rank}.npy", tensor)
        else:
            np.save(directory / f"{name}.npy", value)
