"""synth's version (its own module, so code anywhere in synth can read it without importing synth)."""

__version__ = "0.1.0"
