"""Render targets: one module per output format a profile renders to."""
