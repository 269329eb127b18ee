"""The evaluation on a real local model: `python -m bench --real` (see main.py)."""
