"""docs/envs.md's table of ids is the registry's (torchpool/_env_table.py, ``python -m torchpool list --markdown``)."""

from pathlib import Path

import pytest

import torchpool
from torchpool import _env_table, _family_modules

ENVS_MD = Path(__file__).resolve().parent.parent / "docs" / "envs.md"


def test_docs_envs_md_lists_exactly_the_registered_ids():
    unbuilt = [name for name, module in _family_modules.declared().items() if not module.built()]
    if unbuilt:
        pytest.skip(f"docs/envs.md shows the full build; this one lacks {unbuilt}")
    text = ENVS_MD.read_text()
    assert _env_table.BEGIN in text and _env_table.END in text, "docs/envs.md lost the generated table's markers"
    shown = text[text.index(_env_table.BEGIN):text.index(_env_table.END) + len(_env_table.END)] + "\n"
    assert shown == _env_table.markdown(), (
        "docs/envs.md's table differs from the registry: rewrite it with `python -m torchpool list --markdown` "
        "(between its markers)")


def test_the_table_names_every_listed_id_once():
    table = _env_table.markdown()
    declared = set().union(*(module.families for module in _family_modules.declared().values()))
    for env_id in torchpool.list_envs():
        if torchpool.registry.lookup(env_id).family not in declared:
            continue  # a user's C++ env (register_cpp_env) an earlier test of this process made
        assert table.count(f"`{env_id}`") == 1, f"{env_id} appears {table.count(f'`{env_id}`')} times"
    assert "_Probe-v0" not in table, "the hidden test family is listed"
