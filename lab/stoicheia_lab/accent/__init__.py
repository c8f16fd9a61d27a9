"""Evaluation of the accentuator (``accent-eval``)."""
