"""Kept only until ``synth/__init__.py`` imports these names from :mod:`synth.evaluate.retrieved`.

The module was renamed so that ``contexts`` names one thing in synth: the package of stages 2-4.
Delete this file once nothing imports it.
"""

from synth.evaluate.retrieved import context_ids, context_texts

__all__ = ["context_ids", "context_texts"]
