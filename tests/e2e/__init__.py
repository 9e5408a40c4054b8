"""Real-browser tests, run by `make e2e` (a package, so that its conftest does not shadow tests/conftest.py)."""
