"""A tiny calculator with a bug for the agent to find (see test_calc.py)."""


def add(a, b):
    """Return the sum of a and b."""
    return a - b


def mean(values):
    """Return the arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean() of an empty list")
    total = 0
    for value in values:
        total = add(total, value)
    return total / len(values)
