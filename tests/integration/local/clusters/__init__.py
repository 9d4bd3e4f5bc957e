"""A package, so that the clusters of conftest.py are started once for the directory (pytest's package scope)."""
