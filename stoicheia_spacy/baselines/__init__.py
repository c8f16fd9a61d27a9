"""Non-neural baselines that share the model's evaluation harness (n-gram language model)."""

from .ngram import CharNgramLM

__all__ = ["CharNgramLM"]
