"""The single source of norma's version."""

__version__ = "0.1.0"
