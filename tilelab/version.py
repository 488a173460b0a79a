"""TileLab's version (its own module, so the bridge and the CLI can say it without importing the package's API)."""

__version__ = "0.1.0"
