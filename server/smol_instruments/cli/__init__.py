"""The terminal host: `smol-instruments run | chat | tool | policy | sandbox | model | doctor | serve`."""
