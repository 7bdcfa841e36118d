"""Draw docs/architecture.svg from the code: the package's parts in layers by their imports
(a part sits above every part it imports), an arrow for each import between parts, and
the data path of both compilers. `python docs/architecture_picture.py` writes
it; tests/unit/test_architecture_picture.py checks that the committed picture is current.
"""

from __future__ import annotations

import ast
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "architecture.svg"
# The parts drawn, most specific first: a module belongs to the first that prefixes it.
PARTS = ("cli", "emitters.autotune", "emitters.ccn.cpu", "emitters.ccn.cuda", "emitters.ccn",
         "emitters.fsm", "emitters.toolchain", "emitters.names", "emitters.jinja_env",
         "ccn_compiler.frontend", "ccn_compiler.schedules", "ccn_compiler",
         "fsm_compiler.pipeline", "fsm_compiler.engines",
         "fsm_compiler.tokens", "fsm_compiler.analysis", "fsm_compiler.automata",
         "fsm_compiler", "grammar")
DATA_PATHS = (  # (part, what it does) along each compiler's data path
    ("coconetc build", (("", "model.ccn"), ("grammar", "parse"), ("ccn_compiler", "check types"),
                        ("schedules", "rewrite"), ("emitters/ccn", "lowering plan"),
                        ("cpu | cuda", "print C++"), ("toolchain", "CMake, Ninja"))),
    ("boostfsm compile", (("", "rules.fsm"), ("grammar", "parse"), ("automata", "DFA, minimal"),
                          ("engines | tokens", "set, lexer"), ("analysis", "auto's evidence"),
                          ("emitters/fsm", "blob, project"), ("toolchain", "CMake, Ninja"))),
)
BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 178, 30, 16, 46, 20


def part_of(module: str) -> str | None:
    return next((p for p in PARTS if module == p or module.startswith(p + ".")), None)


def imports_between_parts() -> set[tuple[str, str]]:
    """(importer's part, imported part) for every import of one part by another."""
    edges = set()
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] not in {p.split(".")[0] for p in PARTS}:
            continue
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        source = part_of(module)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(relative))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for name in names:
                target = part_of(name.removeprefix("parafuse."))
                if source and target and target != source:
                    edges.add((source, target))
    return edges


def layers(edges: set[tuple[str, str]]) -> list[list[str]]:
    """Parts by level: 0 imports no other part; a part is one above its highest import."""
    level: dict[str, int] = {}

    def of(part: str) -> int:
        if part not in level:
            level[part] = 0
            level[part] = 1 + max((of(t) for s, t in edges if s == part), default=-1)
        return level[part]
    for part in PARTS:
        of(part)
    upward = sorted(f"{s} -> {t}" for s, t in edges if level[s] <= level[t])
    if upward:
        raise ValueError("parts that import each other in a cycle: " + ", ".join(upward))
    top = max(level.values())
    return [[p for p in PARTS if level[p] == lvl] for lvl in range(top, -1, -1)]


def box(x: float, y: float, text: str, fill: str) -> str:
    return (f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="{fill}" '
            f'stroke="#445"/><text x="{x + BOX_W / 2}" y="{y + BOX_H / 2 + 4}" '
            f'text-anchor="middle">{escape(text)}</text>')


def picture() -> str:
    edges = imports_between_parts()
    rows = layers(edges)
    width = MARGIN * 2 + max(len(r) for r in rows) * (BOX_W + GAP_X)
    where: dict[str, tuple[float, float]] = {}
    items = []
    for r, row in enumerate(rows):
        offset = (width - len(row) * (BOX_W + GAP_X) + GAP_X) / 2
        for c, part in enumerate(row):
            where[part] = (offset + c * (BOX_W + GAP_X), MARGIN + 24 + r * (BOX_H + GAP_Y))
    for source, target in sorted(edges):
        (x1, y1), (x2, y2) = where[source], where[target]
        items.append(f'<line x1="{x1 + BOX_W / 2}" y1="{y1 + BOX_H}" x2="{x2 + BOX_W / 2}" '
                     f'y2="{y2}" stroke="#99a" marker-end="url(#arrow)"/>')
    items += [box(*where[p], p.replace(".", "/"), "#e8eef8") for p in PARTS]
    y = MARGIN + 24 + len(rows) * (BOX_H + GAP_Y) + 20
    items.append(f'<text x="{MARGIN}" y="{MARGIN + 10}" font-weight="bold">Layers: an arrow '
                 'means "imports" (drawn from the code)</text>')
    items.append(f'<text x="{MARGIN}" y="{y}" font-weight="bold">Data path</text>')
    step_w = (width - 2 * MARGIN) / len(DATA_PATHS[0][1])
    for lane, (command, steps) in enumerate(DATA_PATHS):
        ly = y + 14 + lane * (BOX_H + 34)
        items.append(f'<text x="{MARGIN}" y="{ly + 10}">{escape(command)}</text>')
        for s, step in enumerate(steps):
            x = MARGIN + s * step_w
            middle, part, action = x + (step_w - 14) / 2, *step
            items.append(f'<rect x="{x}" y="{ly + 16}" width="{step_w - 14}" height="{BOX_H}" '
                         f'rx="5" fill="#eef6e8" stroke="#454"/><text x="{middle}" '
                         f'y="{ly + 28}" text-anchor="middle" font-size="10">{escape(part)}'
                         f'<tspan x="{middle}" dy="12">{escape(action)}</tspan></text>')
            if s:
                items.append(f'<line x1="{x - 14}" y1="{ly + 16 + BOX_H / 2}" x2="{x}" '
                             f'y2="{ly + 16 + BOX_H / 2}" stroke="#454" '
                             f'marker-end="url(#arrow)"/>')
    height = y + 14 + len(DATA_PATHS) * (BOX_H + 34) + MARGIN
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'font-family="sans-serif" font-size="11">\n<defs><marker id="arrow" '
            'viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
            'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#778"/></marker></defs>\n')
    return head + "\n".join(items) + "\n</svg>\n"


if __name__ == "__main__":
    PICTURE.write_text(picture())
    sys.stdout.write(f"wrote {PICTURE.relative_to(ROOT)}\n")
