"""Kept only until the command line imports ``failure_summary`` from :mod:`synth.evaluate._jobs`.

The module was renamed so that ``run`` names one thing in synth: the run package. Delete this file
once nothing imports it.
"""

from synth.evaluate._jobs import failure_summary

__all__ = ["failure_summary"]
