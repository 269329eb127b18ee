"""The analysis of one command: the tree walk (engine), the state it tracks, the checks every
program gets, text bash evaluates again, environment assignments and inline code."""
