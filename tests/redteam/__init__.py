"""The red-team suite: attacks on smol-instruments, each confirmed or refuted by its effect."""
