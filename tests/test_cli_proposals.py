"""The proposal commands: `memtend proposals USER`, `accept USER ID [--text ...]`, `reject USER ID`, over a store
whose application runs with Memory(write_mode="propose"); user errors are one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from memtend import Memory, Source
from memtend.cli import main

CARD = "4111 1111 1111 1111"


def test_list_accept_edit_and_reject_proposals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], embedding_function
) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "s"
    with Memory(path=store, write_mode="propose", embedding_function=embedding_function) as app:
        alice = app.user("alice")
        tea = alice.remember("Likes green tea", source=Source.AGENT)
        diet = alice.set_fact("diet", "vegetarian", source=Source.INFERRED).record
        tabs = alice.remember("Prefers tabs over spaces", source=Source.AGENT)
    assert main(["--path", str(store), "proposals", "alice"]) == 0
    listed = capsys.readouterr().out
    assert all(r.id in listed for r in (tea, diet, tabs)) and "[diet]" in listed
    assert main(["--path", str(store), "recall", "--user", "alice", "green tea"]) == 0
    assert "Likes green tea" not in capsys.readouterr().out  # not recalled before acceptance
    assert main(["--path", str(store), "accept", "alice", tea.id, "--text", "Likes jasmine tea"]) == 0
    assert "accepted note: Likes jasmine tea" in capsys.readouterr().out
    assert main(["--path", str(store), "accept", "alice", diet.id]) == 0
    assert "diet: vegetarian" in capsys.readouterr().out
    assert main(["--path", str(store), "reject", "alice", tabs.id]) == 0
    assert f"rejected {tabs.id}" in capsys.readouterr().out
    assert main(["--path", str(store), "proposals", "alice"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["--path", str(store), "list", "--user", "alice", "--status", "proposed"]) == 0
    assert capsys.readouterr().out == ""
    with Memory(path=store, embedding_function=embedding_function) as again:
        assert again.user("alice").facts() == {"diet": "vegetarian"}
        assert [h.text for h in again.user("alice").recall("tea", k=1)] == ["Likes jasmine tea"]


def test_proposal_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], embedding_function) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "s"
    with Memory(path=store, write_mode="propose", embedding_function=embedding_function) as app:
        note = app.user("alice").remember("Likes green tea", source=Source.AGENT)
        said = app.user("alice").remember("My cat is Miso")
    capsys.readouterr()
    cases = [
        (["accept", "alice", "no-such-id"], "RecordNotFoundError"),
        (["accept", "alice", said.id], "not a proposal"),
        (["accept", "alice", note.id, "--text", f"card {CARD}"], "SensitiveDataError"),
        (["reject", "bob", note.id], "RecordNotFoundError"),  # another user's proposal is not reachable
        (["accept", "alice", note.id, "--text", "   "], "InvalidInputError"),
    ]
    for argv, expected in cases:
        assert main(["--path", str(store), *argv]) == 2
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert CARD not in err
    assert main(["--path", str(store), "proposals", "alice"]) == 0
    assert note.id in capsys.readouterr().out  # nothing lost


@pytest.mark.parametrize("command", ["proposals", "accept", "reject"])
def test_the_commands_have_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0 and "usage: memtend" in capsys.readouterr().out
