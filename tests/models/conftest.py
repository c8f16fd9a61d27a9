"""The models tests run torch on one thread (two cores are shared with the rest of the suite);
the tiny-checkpoint fixtures live in ``tests/conftest.py``."""

import torch

torch.set_num_threads(1)
