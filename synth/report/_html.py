"""The machinery every report shares: the template engine, the inlined plot library, and data
embedded in the page so that no document or model text is ever read as markup.

A report is one self-contained HTML file: its styles, scripts and the plotly.js bundle are inlined,
so it opens from disk with no network. Text from documents and models reaches the page two ways,
both escaped: through jinja2 with autoescape on (the header, the stage table), or as JSON in a
``<script type="application/json">`` block (:func:`script_json`) that the page's script reads and
puts into the page with ``textContent``, never ``innerHTML``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from synth.dataset._public import public_source

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

# inside a <script> element the HTML parser ends the script at "</script" and opens comments at
# "<!--", whatever JSON means: the JSON escapes below keep both out while JSON.parse reads the same
# value back (U+2028/2029 are escaped for the scripts that still read JSON as JavaScript)
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def script_json(value: Any) -> Markup:
    """``value`` as JSON that is safe inside a ``<script>`` element (no ``<``, ``>`` or ``&``)."""
    from markupsafe import Markup

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(text.translate(_SCRIPT_ESCAPES))


@functools.cache
def plotly_js() -> Markup:
    """The plotly.js bundle, to inline in a ``<script>`` element (read once per process)."""
    from markupsafe import Markup
    from plotly.offline import get_plotlyjs

    # the minified bundle holds no "</script" today; escaping it keeps a future one from ending
    # the element early (a JavaScript string reads "<\/" as "</")
    return Markup(get_plotlyjs().replace("</script", "<\\/script"))


@functools.cache
def static(name: str) -> Markup:
    """The report's own script or style sheet ``name`` (under ``templates/``), inlined as it is:
    not read as a template, so a ``{#`` in JavaScript stays JavaScript."""
    from importlib.resources import files

    from markupsafe import Markup

    return Markup((files("synth.report") / "templates" / name).read_text(encoding="utf-8"))


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("synth.report", "templates"),
        autoescape=True,  # every file, .html.j2 or not: a template never emits unescaped text
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["static"] = static
    return environment


def render(template: str, **context: Any) -> str:
    """The page that ``template`` (a file under ``synth/report/templates``) makes of ``context``;
    ``plotly`` (the bundle) and ``data`` (``context["data"]`` as script-safe JSON) are added."""
    return render_page(template, plotly=plotly_js(), **context)


def render_page(template: str, **context: Any) -> str:
    """:func:`render` without the plot library, for pages that draw no plots (the review page).

    ``data`` may be given as :func:`script_json` text already (a page that reuses a serialisation).
    """
    from markupsafe import Markup

    data = context.pop("data", {})
    data = data if isinstance(data, Markup) else script_json(data)
    return _environment().get_template(template).render(data=data, **context)


T = TypeVar("T")


def given(
    value: T | str | os.PathLike[str],
    kind: type[T],
    read: Callable[[str], T],
    source: str | os.PathLike[str] | None = None,
) -> tuple[T, str | None]:
    """``value`` when it is a ``kind``, else ``read`` of the file it names; and the page's file
    name (:func:`page_name`): of ``source``, else of that file, else None."""
    if isinstance(value, kind):
        return value, page_name(source)
    path = os.fspath(value)  # type: ignore[arg-type]  # not a kind: a path
    return read(path), page_name(source if source is not None else path)


def page_name(source: str | os.PathLike[str] | None) -> str | None:
    """The file a page is about, as its title and facts name it: a page is shared, so a path
    from the local disk (absolute, or out of the working folder) is named by its file name
    alone, as a published golden's sources are (``synth/dataset/_public.py``)."""
    return public_source(os.fspath(source)) if source is not None else None


__all__ = ["given", "page_name", "plotly_js", "render", "render_page", "script_json", "static"]
