"""The daemon's features, one module each; `lsp/app.py` lists them and builds them."""
