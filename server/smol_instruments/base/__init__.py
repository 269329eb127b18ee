"""The bottom layer: settings, errors, processes, containment, git; imports nothing of ours above."""
