"""Smol Instruments: a coding agent for local, low-power language models, hosted in the editor.

Importing the package first stops our dependencies from loading a `.env` into our environment
(`base/environment.py`): every entry point imports this before any dependency.
"""

from .base.environment import keep_dependencies_out

keep_dependencies_out()

__version__ = "0.1.0"
