"""The analysis notebook executes headless, so it never rots: as ``jupyter nbconvert --to notebook
--execute`` runs it (nbconvert's executor is nbclient), and it prints what each cell says it shows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "projects" / "notebooks" / "analysis.ipynb"


def outputs_of(nb: nbformat.NotebookNode) -> list[str]:
    """The text each code cell printed or returned, one string per cell."""
    return ["".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) for out in cell.get("outputs", []))
            for cell in nb.cells if cell.cell_type == "code"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The notebook executed by ``jupyter nbconvert --to notebook --execute`` where nbconvert is
    installed, else by nbclient (what nbconvert's executor runs)."""
    out = tmp_path_factory.mktemp("notebook")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    try:
        import nbconvert  # noqa: F401
    except ImportError:
        nb = nbformat.read(NOTEBOOK, as_version=4)
        os.environ.setdefault("MPLBACKEND", "Agg")
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(out)}}).execute()
        return outputs_of(nb)
    shutil.copy(NOTEBOOK, out / NOTEBOOK.name)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--ExecutePreprocessor.timeout=600", "--output", "executed.ipynb", NOTEBOOK.name],
                   cwd=out, env=env, check=True, capture_output=True)
    return outputs_of(nbformat.read(out / "executed.ipynb", as_version=4))


def test_analysis_notebook_runs(executed: list[str]) -> None:
    outputs = "".join(executed)
    assert "stoicheia_encoder" in outputs
    assert "True" in outputs  # the codec round trip of the passage
    assert "'dia'" in outputs  # per-plane confidence summary
    assert "90% interval" in outputs and "dialect:" in outputs  # doc._.date, doc._.genre / doc._.dialect
    assert "Homer: no date: reads as a literary text" in outputs  # the dater says when it does not apply


def test_the_accentuation_cell_prints_the_accented_text_not_the_input(executed: list[str]) -> None:
    """It printed ``doc.text``, the bare input ``ανδρωνδεπιφανωνπασαγηταφος``, back."""
    [cell] = [out for out in executed if out.startswith("ανδρωνδεπιφανωνπασαγηταφος")]
    accented = cell.split("->", 1)[1].strip()
    assert accented != "ανδρωνδεπιφανωνπασαγηταφος" and " " in accented  # divided
    assert accented.startswith("ἀνδρῶν")  # accented, with its breathing (Thucydides 2.43.3)
