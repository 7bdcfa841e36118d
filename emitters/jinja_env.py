"""The Jinja2 environment every emitter renders with: templates decide file structure,
Python prints expressions. Undefined variables are errors, never empty strings."""

from __future__ import annotations

import functools

import jinja2


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("parafuse.emitters", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template: str, **context: object) -> str:
    """Render `templates/<template>` with `context`."""
    return environment().get_template(template).render(**context)
