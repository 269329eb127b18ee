"""The held-out split: tasks run only to report figures, never read to tune the agent.

Whoever changes the agent must not read this package (its task texts, checks and right
solutions), its variants' bugs, or the held-out transcripts and records the harness writes to
test-artifacts/real-heldout/; they read the figures the report gives. See docs/evaluation.md.
"""

from . import docopt_tasks, tasks

TASKS = (*tasks.TASKS, *docopt_tasks.TASKS)

__all__ = ["TASKS"]
