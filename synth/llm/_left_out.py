"""Modules an SDK imports when it can, for features synth never uses, left out of a process that
the command line owns.

The openai SDK imports aiohttp whenever it is installed (chromadb's dependencies install it), for
an optional HTTP client that synth never makes: about a quarter of a second of a command's start
here (the package, and the two TLS contexts it reads the system's certificates for as it is
imported). ``synth`` run as a program (:func:`synth.cli.main`) marks that module absent before
anything imports the SDK (``sys.modules[name] = None``: Python's own way of making an import of
it fail), and the SDK goes on as it does where aiohttp is not installed. httpx's own command line
(``httpx._main``: click, rich's progress and syntax views, pygments) is left out the same way:
httpx imports it when it can and falls back to a stub. A library user's process
is never touched. Should a later SDK need the module after all, :func:`take_back` removes the mark
and the import is tried again (:func:`synth.llm._adapter.import_sdk`); and a command that loads the
user's own code (``--system module:function``, :func:`synth.evaluate._specs.load_callable`) takes
the mark back first, before its models import the SDK, since that code may use the aiohttp client.
"""

from __future__ import annotations

import sys

#: module (under a package) -> the package that imports it; left out while that package is not
#: imported yet
LEFT_OUT = {
    "openai._vendor.httpx_aiohttp": "openai",
    # httpx's own command line (click, rich's progress and syntax views, pygments): 35 ms of
    # every import of httpx (a new store's handle imports it, synth.store._handle)
    "httpx._main": "httpx",
}


def leave_out() -> None:
    """Mark every module of :data:`LEFT_OUT` absent whose package is not imported yet."""
    for name, package in LEFT_OUT.items():
        if package not in sys.modules:
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def take_back() -> bool:
    """Remove the marks; whether there was one."""
    taken = False
    for name in LEFT_OUT:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]
            taken = True
    return taken


__all__ = ["LEFT_OUT", "leave_out", "take_back"]
