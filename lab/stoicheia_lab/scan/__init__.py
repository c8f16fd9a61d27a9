"""Meter and macron evaluation data: the Norma benchmark, silver scansions, corpus vowel lengths."""
