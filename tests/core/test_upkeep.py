"""Scoped lifetimes and upkeep that runs by itself, on real Chroma with the real embedding model: scopes and their
windows, extension on use and restatement, the fold into one line with provenance, the off switch, the schedule,
bounded passes that resume, and one pass at a time between processes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import chromadb
import pytest
from conftest import unique_prefix
from memtend import Event, Memory, RetentionPolicy, Scope, Status, Upkeep
from memtend.policies import forgetting
from memtend.records import DAY
from memtend.storage.upkeep_rows import UpkeepRows

LONG = "We chose Postgres 16 for the billing service. Logical replication and the team's experience decided it."
BY_HAND = Upkeep(every_seconds=None, on_close=False)


def _memory(embedding_function: object, **kw: object) -> Memory:
    kw.setdefault("upkeep", BY_HAND)
    return Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=unique_prefix(),
        **kw,  # type: ignore[arg-type]
    )


def test_scopes_end_their_windows_and_a_long_note_is_folded_into_one_line(memory: Memory) -> None:
    alice = memory.user("alice")
    t0 = time.time()
    task = alice.remember(LONG, scope="task")
    short = alice.remember("Use the staging cluster", scope=Scope.TASK)
    project = alice.remember("The apollo project ships in March. The launch is gated on the audit.", scope="project")
    pref = alice.remember("Prefers short answers", scope="user")
    plain = alice.remember("Likes hiking on weekends")
    assert alice.get(task.id).scope is Scope.TASK, "the scope is stored and read back"

    report = memory.upkeep(now=t0 + 8 * DAY)
    assert report.ran and report.users == 1 and report.folded == 1
    active = {r.id: r for r in alice.list()}
    assert task.id not in active and short.id not in active
    assert {project.id, pref.id, plain.id} <= set(active)
    line = next(r for r in active.values() if r.derived_from == [task.id])
    assert line.text == "[" + time.strftime("%Y-%m-%d", time.gmtime(task.created_at)) + "] " + LONG.split(". ")[0] + "."
    assert line.scope is Scope.TASK and line.extra[forgetting.FOLDED] is True and line.created_at == task.created_at
    archived = alice.get(task.id)
    assert archived.status is Status.ARCHIVED and archived.superseded_by == line.id and archived.text == LONG
    assert alice.get(short.id).status is Status.ARCHIVED, "already one short line: archived as it is"
    assert [h.op for h in alice.history(line.id)] == ["fold"]
    assert alice.recall("which database for billing?", k=1, now=t0 + 8 * DAY)[0].record.id == line.id

    memory.upkeep(now=t0 + 16 * DAY)  # the line's own window (7 days from its fold) ended
    assert alice.get(line.id).status is Status.ARCHIVED
    memory.upkeep(now=t0 + 91 * DAY)
    assert alice.get(project.id).status is Status.ARCHIVED
    assert {pref.id, plain.id} <= {r.id for r in alice.list()}, "user scope: until superseded"


def test_use_and_restatement_extend_a_window(ephemeral_memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    import memtend.user_memory as user_memory
    from memtend.capture import merge

    alice = ephemeral_memory.user("alice")
    t0 = time.time()
    used = alice.remember("Deploy target for ticket 481 is eu-west-2", scope="task")
    restated = alice.remember("Ticket 481 needs sign-off from Dana", scope="task")
    idle = alice.remember("Ticket 481 logs are in the ops bucket", scope="task")
    monkeypatch.setattr(user_memory, "_clock", lambda: t0 + 5 * DAY)
    assert alice.recall("deploy target eu-west-2", k=1)[0].record.id == used.id
    monkeypatch.undo()
    monkeypatch.setattr(merge, "now", lambda: t0 + 6 * DAY)
    assert alice.remember("Ticket 481 needs sign-off from Dana", scope="task").id == restated.id, "restated"
    monkeypatch.undo()
    assert alice.get(restated.id).updated_at == t0 + 6 * DAY
    assert [h.op for h in alice.history(restated.id)][-1] == "refresh"

    ephemeral_memory.upkeep(now=t0 + 8 * DAY)
    assert {r.id for r in alice.list()} == {used.id, restated.id}, "the idle one went"
    assert alice.get(idle.id).status is Status.ARCHIVED
    ephemeral_memory.upkeep(now=t0 + 14 * DAY)
    assert alice.list() == []


def test_an_explicit_expiry_ends_any_memory(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    t0 = time.time()
    note = alice.remember("Door code changes on Monday", expires_at=t0 + DAY)
    event = alice.log("Paged the on-call", scope="user", expires_at=t0 + 2 * DAY)
    rule = alice.add_rule("Never deploy on Fridays")
    report = alice.forget(now=t0 + 1.5 * DAY)
    assert [(rid, reason) for rid, _, reason in report.archived] == [(note.id, "expired")]
    alice.forget(now=t0 + 3 * DAY)
    assert [r.id for r in alice.list()] == [rule.id] and alice.get(event.id).status is Status.ARCHIVED
    with pytest.raises(Exception, match="expires_at"):
        alice.remember("x", expires_at=float("inf"))
    with pytest.raises(Exception, match="scope"):
        alice.remember("x", scope="sprint")
    assert [r.id for r in alice.list()] == [rule.id], "a refused write stores nothing"


def test_a_fact_can_carry_a_scope_and_restating_it_extends_its_window(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Project and task facts end with their windows (archived whole: a fact is one line already, so nothing is
    folded), restating one unchanged is a use, and a user fact stays until superseded. Every backend: on a server
    the restatement is a claim row that the readers weigh; where the folder is held it is a usage stamp."""
    import memtend.user_memory as user_memory
    from memtend.policies.precedence import FactOutcome

    alice = memory.user("alice")
    t0 = time.time()
    project = alice.set_fact("project.database", "Postgres 16", scope="project").record
    alice.set_fact("ticket.assignee", "Dana", scope=Scope.TASK)
    alice.set_fact("sprint.goal", "ship the importer", expires_at=t0 + 2 * DAY)
    alice.set_fact("name", "Alice")
    assert alice.get_fact("project.database").scope is Scope.PROJECT  # type: ignore[union-attr]
    assert alice.get_fact("name").scope is None  # type: ignore[union-attr]
    monkeypatch.setattr(user_memory, "now", lambda: t0 + 5 * DAY)
    assert alice.set_fact("ticket.assignee", "Dana", scope="task").outcome is FactOutcome.UNCHANGED
    monkeypatch.undo()

    memory.upkeep(now=t0 + 3 * DAY)
    assert "sprint.goal" not in alice.facts(), "an explicit expiry ends a fact too"
    memory.upkeep(now=t0 + 10 * DAY)
    assert alice.facts() == {"project.database": "Postgres 16", "ticket.assignee": "Dana", "name": "Alice"}, (
        "restated on day 5: the task window (7 days) runs from there"
    )
    memory.upkeep(now=t0 + 13 * DAY)
    assert "ticket.assignee" not in alice.facts()
    memory.upkeep(now=t0 + 100 * DAY)
    assert alice.facts() == {"name": "Alice"}, "user scope: until superseded"
    archived = alice.get(project.id)
    assert archived.status is Status.ARCHIVED and archived.value == "Postgres 16"
    assert alice.restore(project.id).status is Status.ACTIVE and alice.facts()["project.database"] == "Postgres 16"
    with pytest.raises(Exception, match="scope"):
        alice.set_fact("x", "y", scope="sprint")


def test_an_llm_line_summariser_plugs_in_is_gated_and_deleting_the_original_removes_its_line(
    embedding_function: object,
) -> None:
    def llm(record: object) -> str:
        return "Billing runs on Postgres 16 (card 4111 1111 1111 1111)"

    mem = _memory(embedding_function, upkeep=Upkeep(every_seconds=None, on_close=False, line_summarizer=llm))
    alice = mem.user("alice")
    t0 = time.time()
    note = alice.remember(LONG, scope="project")
    report = alice.forget(now=t0 + 100 * DAY)
    [(archived_id, line_id)] = report.folded
    assert archived_id == note.id
    line = alice.get(line_id)
    assert line.text.startswith("Billing runs on Postgres 16") and "4111 1111 1111 1111" not in line.text
    receipt = alice.delete(note.id)
    assert line_id in receipt.removed
    assert alice.list(status=None) == []
    mem.close()


def test_upkeep_off_runs_nothing_by_itself_but_runs_by_hand(embedding_function: object) -> None:
    mem = _memory(embedding_function, upkeep=None)
    assert mem._upkeep._thread is None
    alice = mem.user("alice")
    t0 = time.time()
    alice.remember(LONG, scope="task", expires_at=t0 - 1)
    mem.close()  # no pass on close
    assert mem._upkeep.last is None

    mem = _memory(embedding_function, upkeep=None)
    report = mem.upkeep()
    assert report.ran and report.round_done
    mem.close()


def test_a_store_opened_with_defaults_runs_upkeep_on_a_schedule_and_on_close(
    tmp_path: Path, embedding_function: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMTEND_UPKEEP")
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    assert mem._upkeep.settings == Upkeep() and mem._upkeep._thread is not None
    alice = mem.user("alice")
    gone = alice.remember("Temporary", expires_at=time.time() + 0.5)
    mem.close()
    assert mem._upkeep.last is not None and mem._upkeep.last.ran, "a pass ran on close"
    assert mem._upkeep._thread is None

    passed = threading.Event()
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function, upkeep=Upkeep(every_seconds=0.05))
    runner = mem._upkeep
    original = runner.run

    def run(at: float | None = None) -> object:
        out = original(at)
        passed.set()
        return out

    runner.run = run  # type: ignore[method-assign]
    time.sleep(0.6)  # past the note's expiry
    passed.clear()
    assert passed.wait(60), "the timer thread ran a pass"
    assert mem.user("alice").get(gone.id).status is Status.ARCHIVED
    mem.close()


async def test_aupkeep(ephemeral_memory: Memory) -> None:
    await ephemeral_memory.user("alice").aremember("Temporary", scope="session", expires_at=time.time() - 1)
    report = await ephemeral_memory.aupkeep()
    assert report.ran and report.archived == 1


def test_a_pass_is_bounded_and_the_next_resumes_where_it_left_off(embedding_function: object) -> None:
    mem = _memory(embedding_function, upkeep=Upkeep(every_seconds=None, on_close=False, users_per_pass=3))
    t0 = time.time()
    users = [f"user-{n}" for n in range(7)]
    for uid in users:
        mem.user(uid).remember(f"Scratch note of {uid}", expires_at=t0 + 1)
    archived = []
    for _ in range(3):
        report = mem.upkeep(now=t0 + 10)
        archived.append(sum(mem.user(u).list() == [] for u in users))
        assert report.users <= 3 and not report.round_done
    assert archived == [3, 6, 7], "three users a pass, each pass where the last one stopped"
    rows = UpkeepRows(mem.storage.changes_collection, mem.storage.memories)
    assert rows.cursor().offset > 0 and rows.cursor().rounds == 0
    # the history rows those passes wrote come after the users' records: the round ends past them
    for _ in range(5):
        if mem.upkeep(now=t0 + 10).round_done:
            break
    assert rows.cursor().offset == 0 and rows.cursor().rounds == 1, "the next round starts over"
    mem.close()


def test_one_pass_at_a_time_between_processes(two_processes: tuple[Memory, Memory]) -> None:
    a, b = two_processes
    t0 = time.time()
    note = a.user("alice").remember("Scratch", expires_at=t0 + 1)
    rows = UpkeepRows(a.storage.changes_collection, a.storage.memories)
    token = rows.take_lease("another process", t0, 900)
    assert token is not None
    assert rows.take_lease("a third process", t0, 900) is None, "a running lease is not taken"
    assert not b.upkeep(now=t0 + 10).ran and not a.upkeep(now=t0 + 10).ran
    assert b.user("alice").get(note.id).status is Status.ACTIVE, "a skipped pass did nothing"
    rows.release(token)
    assert b.upkeep(now=t0 + 10).ran
    assert a.user("alice").get(note.id).status is Status.ARCHIVED

    dead = rows.take_lease("killed process", t0, 5)  # its holder died mid-pass: the lease runs out
    assert dead is not None
    assert not a.upkeep(now=t0 + 4).ran and a.upkeep(now=t0 + 6).ran


def test_concurrent_passes_on_a_server_never_overlap(chroma_server: object, embedding_function: object) -> None:
    prefix = unique_prefix()
    stores = [
        Memory(
            client=chroma_server.client(),  # type: ignore[attr-defined]
            embedding_function=embedding_function,
            collection_prefix=prefix,
            upkeep=BY_HAND,
        )
        for _ in range(2)
    ]
    stores[0].user("alice").remember("Scratch", expires_at=time.time() - 1)
    inside = 0
    overlaps = 0
    guard = threading.Lock()
    for mem in stores:
        original = mem._upkeep._pass

        def watched(rows: object, t: float, original: object = original) -> object:
            nonlocal inside, overlaps
            with guard:
                inside += 1
                overlaps += inside > 1
            try:
                time.sleep(0.05)
                return original(rows, t)  # type: ignore[operator]
            finally:
                with guard:
                    inside -= 1

        mem._upkeep._pass = watched  # type: ignore[method-assign]
    ran: list[bool] = []

    def passes(mem: Memory) -> None:
        for _ in range(5):
            ran.append(mem.upkeep().ran)

    threads = [threading.Thread(target=passes, args=(m,)) for m in stores]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert overlaps == 0 and any(ran)
    for mem in stores:
        mem.close()


def test_a_store_stays_bounded_over_months_of_daily_use(tmp_path: Path, embedding_function: object) -> None:
    """A fixed clock advanced day by day for 150 days, writes every day (notes of three scopes, events, session
    state in a new session each day), one upkeep pass a day, on an embedded store: what is active and what is
    stored (records, history, documents) levels off instead of growing."""
    retention = RetentionPolicy(
        scope_days={Scope.PROJECT: 20.0, Scope.TASK: 3.0, Scope.SESSION: 1.0},
        archive_grace_days=10.0,
        history_days=15.0,
        session_days=2.0,
    )
    mem = Memory(
        path=tmp_path / "store",
        embedding_function=embedding_function,
        retention=retention,
        upkeep=Upkeep(every_seconds=None, on_close=False, compact_over=20, keep_recent=10),
    )
    alice = mem.user("alice")
    t0 = time.time()
    active: list[int] = []
    stored: list[int] = []
    documents: list[int] = []
    for day in range(150):
        t = t0 + day * DAY
        alice.remember(
            f"Day {day}: the task is to migrate table {day}. It blocks the release of week {day // 7}.",
            scope="task",
            at=t,
        )
        alice.remember(f"Project apollo, day {day}: milestone {day} is agreed. Owners are set.", scope="project", at=t)
        alice.remember(f"In this session we looked at report {day}. Nothing else.", scope="session", at=t)
        alice.log_many([Event(text=f"Day {day}: step {n} done", at=t) for n in range(4)])
        alice.session(f"day-{day}").set("cursor", f"row {day}")
        report = mem.upkeep(now=t + DAY / 2)
        assert report.ran and report.errors == 0
        active.append(len(alice.list()))
        counts = alice.stats()["stored"]
        stored.append(sum(counts.values()))
        documents.append(counts["documents"])
    assert stored[-1] > 0
    # written grows linearly; what is kept stops growing once the longest window, fold and grace have passed
    assert max(active[100:]) <= active[70] * 1.15 + 5, active[::10]
    assert max(stored[100:]) <= stored[70] * 1.15 + 10, stored[::10]
    # expired session state goes with the rows that marked its sessions; what stays is a few rows of the spaces and
    # the bounded call log of the metrics
    assert max(documents[100:]) <= max(documents[10:70]) <= 20, documents[::10]
    assert stored[149] < 0.5 * 150 * 8, "far fewer rows than the writes made"
    mem.close()
