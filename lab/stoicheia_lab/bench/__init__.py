"""Benchmarks: ``stoicheia bench NAME`` or ``python -m stoicheia_lab.bench NAME`` (codec, backbone, quality, ...).

Each benchmark prints ratios against a baseline measured in the same run, so the
numbers mean the same thing on any machine.
"""
