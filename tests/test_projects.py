"""Every spaCy project file parses and resolves its variables (weasel), so `spacy project run`
never fails on the file itself; the top-level file only delegates to workflows that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from weasel.util import load_project_config

REPO = Path(__file__).resolve().parents[1]
PROJECTS = sorted(p.parent for p in REPO.glob("projects/*/project.yml"))


@pytest.mark.parametrize("folder", [REPO, *PROJECTS], ids=lambda p: p.name)
def test_project_file_loads(folder: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STOICHEIA_ASSET_MIRROR", str(tmp_path))
    config = load_project_config(folder)
    assert config["commands"], folder
    for command in config["commands"]:
        assert "${" not in " ".join(command.get("script", [])), command["name"]


def test_top_level_commands_name_existing_workflows_or_commands() -> None:
    top = load_project_config(REPO)
    for command in top["commands"]:
        for line in command["script"]:
            match = re.fullmatch(r"python -m weasel run (\S+) (projects/\S+)", line)
            assert match, line
            sub = load_project_config(REPO / match.group(2))
            known = set(sub.get("workflows", {})) | {c["name"] for c in sub["commands"]}
            assert match.group(1) in known, line
