"""Adapters of the patch validation port (patches/validation.py): docker, local, none."""
