"""Comparisons: brokers, builds or saved runs side by side (compare.md)."""
