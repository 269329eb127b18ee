"""Smol Instruments: a coding agent for local, low-power language models, hosted in the editor."""

__version__ = "0.1.0"
