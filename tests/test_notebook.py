"""The analysis notebook executes headless (nbclient), so it never rots."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "projects" / "notebooks" / "analysis.ipynb"


def test_analysis_notebook_runs(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    os.environ.setdefault("MPLBACKEND", "Agg")
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(
        out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
        for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )
    assert "stoicheia_encoder" in outputs
    assert "True" in outputs  # the codec round trip of the passage
    assert "'dia'" in outputs  # per-plane confidence summary
    assert "90% interval" in outputs and "dialect:" in outputs  # doc._.date, doc._.genre / doc._.dialect
