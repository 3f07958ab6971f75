"""The inspector's pages: plain server-rendered HTML with small forms, every stored value escaped.

Each function takes what the core returned (records, history entries) and the page context (where the inspector
is mounted, the form token) and returns the page; none reads or writes the store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memtend.inspector.html import STYLE, Html, fill, href, join, when
from memtend.records import Kind, Record, Status
from memtend.results import HistoryEntry

# what a finished action says on the page it leads back to (only these texts: nothing from the request is shown)
DONE = {
    "set_fact": "Fact saved.",
    "revise": "Note saved. The old version is in the archive.",
    "delete": "Record deleted for good.",
    "approve": "Approved.",
    "accept": "Proposal accepted.",
    "reject": "Rejected and dropped.",
    "restore": "Restored.",
    "erase": "User erased from every collection.",
}
SECTIONS = (
    (Kind.FACT, "Profile facts"),
    (Kind.NOTE, "Notes"),
    (Kind.RULE, "Rules"),
    (Kind.EVENT, "Events"),
    (Kind.SUMMARY, "Summaries"),
)


@dataclass(frozen=True)
class Context:
    """What every page needs: the mount point (``root``, for links) and the form token (for POSTs)."""

    root: str
    token: str
    title: str

    def link(self, path: str, **query: str) -> str:
        return href(self.root, path, **query)

    def action(self, op: str, label: str, user: str, *, danger: bool = False, **fields: str) -> Html:
        """A one-button POST form for ``op`` on ``user`` (extra hidden ``fields``)."""
        hidden = join(fill('<input type="hidden" name="{}" value="{}">', k, v) for k, v in fields.items())
        css = ' class="danger"' if danger else ""
        return fill(
            '<form class="inline" method="post" action="{}">{}{}{}<button type="submit" name="op" value="{}"'
            + css
            + ">{}</button></form>",
            self.link("/action"),
            self.token_field(),
            fill('<input type="hidden" name="user" value="{}">', user),
            hidden,
            op,
            label,
        )

    def token_field(self) -> Html:
        return fill('<input type="hidden" name="csrf" value="{}">', self.token)


def page(ctx: Context, title: str, body: Html, *, flash: str = "", error: str = "") -> Html:
    notice = fill('<p class="flash" role="status">{}</p>', flash) if flash else Html("")
    if error:
        notice = fill('<p class="error" role="alert">{}</p>', error)
    return fill(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{} - {}</title>'
        '<link rel="stylesheet" href="{}"></head><body><nav><a href="{}">All users</a></nav>'
        "<h1>{}</h1>{}{}</body></html>",
        title,
        ctx.title,
        ctx.link("/style.css"),
        ctx.link("/"),
        title,
        notice,
        body,
    )


def stylesheet() -> str:
    return STYLE


def users_page(ctx: Context, users: Sequence[str], metrics: Mapping[str, Any], flash: str = "") -> Html:
    """Every user, and the store-wide metrics with each user's (``Memory.metrics()``)."""
    if not users:
        body = Html('<p class="note">No users are stored yet.</p>')
    else:
        rows = join(fill('<li><a href="{}">{}</a></li>', ctx.link("/user", user=u), u) for u in users)
        body = fill('<p>{} users.</p><ul class="users">{}</ul>', len(users), rows)
    scopes = {"whole store": metrics.get("store", {}), **metrics.get("users", {})}
    return page(ctx, "Users", join([body, Html("<h2 id='metrics'>Metrics</h2>"), _rates(scopes)]), flash=flash)


RATE_NAMES = (
    ("memory_hit_rate", "memory hit rate"),
    ("context_utilisation_at_compaction", "context use at compaction"),
    ("retrieval_hit_rate", "retrieval hit rate"),
    ("side_effect_repeat_rate", "side-effect repeat rate"),
)
WRITE_NAMES = ("refused", "held_for_review", "proposed", "accepted")


def _rate(value: object) -> str:
    return f"{value:.1%}" if isinstance(value, float) else "no data yet"


def _rates(scopes: Mapping[str, Mapping[str, Any]]) -> Html:
    """One row per scope (the store, a user, a session): the four rates and the write counts."""
    head = join(
        [
            Html("<tr><th>scope</th>"),
            join(fill("<th>{}</th>", name) for _, name in RATE_NAMES),
            join(fill("<th>writes {}</th>", name.replace("_", " ")) for name in WRITE_NAMES),
            Html("</tr>"),
        ]
    )
    rows = join(
        fill(
            '<tr data-scope="{}"><td>{}</td>{}{}</tr>',
            name,
            name,
            join(fill("<td>{}</td>", _rate(m.get(key))) for key, _ in RATE_NAMES),
            join(fill("<td>{}</td>", m.get("writes", {}).get(w, 0)) for w in WRITE_NAMES),
        )
        for name, m in scopes.items()
    )
    return fill('<table class="metrics">{}{}</table>', head, rows)


def metrics_section(metrics: Mapping[str, Any]) -> Html:
    """One user's metrics (``UserMemory.metrics()``): the user's row, then each session's."""
    sessions = metrics.get("sessions", {})
    scopes = {"this user": metrics, **{f"session {name}": m for name, m in sessions.items()}}
    return join([Html('<h2 id="metrics">Metrics</h2>'), _rates(scopes)])


def calls_section(calls: Sequence[Any], shown: int) -> Html:
    """The stored memory-call log (``UserMemory.calls()``: op, key, outcome, session, time; never a value), newest
    first, at most ``shown`` entries."""
    newest = list(reversed(calls))[:shown]
    if not newest:
        return Html('<h2 id="calls">Call log</h2><p class="note">No calls logged yet.</p>')
    rows = join(
        fill(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            when(c.at),
            c.op,
            c.key,
            c.outcome,
            c.session,
            f"{c.ms:.1f}",
            c.by or "application",
        )
        for c in newest
    )
    return fill(
        '<h2 id="calls">Call log</h2><p class="note">{} of {} calls, newest first.</p><table class="calls">'
        "<tr><th>when</th><th>op</th><th>key</th><th>outcome</th><th>session</th><th>ms</th><th>by</th></tr>{}</table>",
        len(newest),
        len(calls),
        rows,
    )


def _record_row(ctx: Context, user: str, r: Record) -> Html:
    """One record: its text, source, dates and status, and the actions its kind and status allow."""
    actions: list[Html] = [fill('<a href="{}">history</a> ', ctx.link("/record", user=user, id=r.id))]
    if r.status is Status.ARCHIVED:
        actions.append(ctx.action("restore", "Restore", user, id=r.id))
    if r.status is Status.PENDING_REVIEW:
        actions.append(ctx.action("approve", "Approve", user, id=r.id))
        actions.append(ctx.action("reject", "Reject", user, id=r.id, danger=True))
    if r.kind is Kind.NOTE and r.status is Status.ACTIVE:
        actions.append(fill('<a href="{}">edit</a> ', ctx.link("/record", user=user, id=r.id)))
    if r.status is not Status.PENDING_REVIEW:
        actions.append(ctx.action("delete", "Delete", user, id=r.id, danger=True))
    flag = Html(' <span class="flagged">flagged: reads like an instruction</span>') if r.flagged else Html("")
    return fill(
        '<tr data-id="{}" data-kind="{}" data-status="{}"><td>{}</td><td class="text">{}{}</td><td>{}</td>'
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        r.id,
        r.kind.value,
        r.status.value,
        r.key or r.kind.value,
        r.text,
        flag,
        r.source.value,
        r.status.value,
        when(r.created_at),
        when(r.updated_at),
        join(actions),
    )


def _table(ctx: Context, user: str, records: Sequence[Record], css: str) -> Html:
    if not records:
        return Html('<p class="note">None.</p>')
    head = (
        "<tr><th>key / kind</th><th>text</th><th>source</th><th>status</th><th>created</th><th>updated</th>"
        "<th>actions</th></tr>"
    )
    rows = join(_record_row(ctx, user, r) for r in records)
    return fill('<table class="records records-{}">' + head + "{}</table>", css, rows)


def user_page(
    ctx: Context,
    user: str,
    records: Sequence[Record],
    facts: Mapping[str, str],
    extra_sections: Sequence[Html] = (),
    flash: str = "",
) -> Html:
    """One user: pending review first, then each kind's live records, then the archive, then the actions."""
    pending = [r for r in records if r.status is Status.PENDING_REVIEW]
    archived = [r for r in records if r.status is Status.ARCHIVED]
    parts: list[Html] = [
        fill(
            '<p><a href="{}">Export (JSON)</a> · <a class="danger" href="{}">Erase this user…</a></p>',
            ctx.link("/export", user=user),
            ctx.link("/erase", user=user),
        ),
        Html('<h2 id="proposals">Proposals</h2>'),
        _proposals(ctx, user, [r for r in records if r.status is Status.PROPOSED]),
        Html('<h2 id="pending">External text awaiting review</h2>'),
        _table(ctx, user, pending, "pending"),
    ]
    for kind, title in SECTIONS:
        live = [r for r in records if r.kind is kind and r.status is Status.ACTIVE]
        parts.append(fill('<h2 id="{}">{}</h2>', kind.value, title))
        parts.append(_table(ctx, user, live, kind.value))
        if kind is Kind.FACT:
            parts.append(_fact_form(ctx, user, facts))
    parts.extend(extra_sections)
    parts.append(Html('<h2 id="archived">Archive</h2>'))
    parts.append(_table(ctx, user, archived, "archived"))
    return page(ctx, f"User {user}", join(parts), flash=flash)


def _proposals(ctx: Context, user: str, proposals: Sequence[Record]) -> Html:
    """What the agent proposed to remember: each accepted as it is or as the person edits it, or rejected."""
    if not proposals:
        return Html('<p class="note">None.</p>')
    rows = []
    for r in proposals:
        shown = r.value if r.kind is Kind.FACT else r.text  # for a fact the person edits the value
        accept = fill(
            '<form class="inline accept" method="post" action="{}">{}<input type="hidden" name="user" value="{}">'
            '<input type="hidden" name="id" value="{}"><input type="hidden" name="original" value="{}">'
            '<textarea name="text" rows="2" cols="50" aria-label="proposed text">{}</textarea>'
            '<button type="submit" name="op" value="accept">Accept</button></form>',
            ctx.link("/action"),
            ctx.token_field(),
            user,
            r.id,
            shown,
            shown,
        )
        rows.append(
            fill(
                '<tr data-id="{}" data-kind="{}" data-status="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
                "<td>{} {}</td></tr>",
                r.id,
                r.kind.value,
                r.status.value,
                r.key or r.kind.value,
                r.source.value,
                when(r.created_at),
                accept,
                ctx.action("reject", "Reject", user, id=r.id, danger=True),
                fill('<a href="{}">history</a>', ctx.link("/record", user=user, id=r.id)),
            )
        )
    head = "<tr><th>key / kind</th><th>source</th><th>proposed</th><th>text</th><th>actions</th></tr>"
    return fill('<table class="records records-proposals">' + head + "{}</table>", join(rows))


def _fact_form(ctx: Context, user: str, facts: Mapping[str, str]) -> Html:
    """Correct a fact (or add one) as the user: the value the person gives wins over what an agent inferred."""
    options = join(fill('<option value="{}"></option>', k) for k in facts)
    return fill(
        '<form method="post" action="{}" class="set-fact">{}<input type="hidden" name="user" value="{}">'
        '<label>key <input name="key" list="fact-keys" required></label> '
        '<label>value <input name="value" required></label> '
        '<button type="submit" name="op" value="set_fact">Correct fact</button>'
        '<datalist id="fact-keys">{}</datalist></form>',
        ctx.link("/action"),
        ctx.token_field(),
        user,
        options,
    )


def record_page(ctx: Context, user: str, record: Record, history: Sequence[HistoryEntry]) -> Html:
    """One record with every change made to it; a live note can be edited here."""
    parts: list[Html] = [
        fill('<p><a href="{}">Back to {}</a></p>', ctx.link("/user", user=user), user),
        _table(ctx, user, [record], "record"),
    ]
    if record.kind is Kind.NOTE and record.status is Status.ACTIVE:
        parts.append(
            fill(
                '<h2>Edit note</h2><form method="post" action="{}" class="edit-note">{}'
                '<input type="hidden" name="user" value="{}"><input type="hidden" name="id" value="{}">'
                '<textarea name="text" rows="4" cols="80" required>{}</textarea><br>'
                '<button type="submit" name="op" value="revise">Save note</button></form>',
                ctx.link("/action"),
                ctx.token_field(),
                user,
                record.id,
                record.text,
            )
        )
    rows = join(
        fill(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class='text'>{}</td><td class='text'>{}</td></tr>",
            when(e.at),
            e.op,
            e.source,
            _snapshot_text(e.before),
            _snapshot_text(e.after),
        )
        for e in history
    )
    parts.append(
        fill(
            '<h2>History</h2><table class="history"><tr><th>when</th><th>change</th><th>by</th><th>before</th>'
            "<th>after</th></tr>{}</table>",
            rows,
        )
    )
    return page(ctx, f"Record {record.id}", join(parts))


def _snapshot_text(snapshot: Mapping[str, Any] | None) -> str:
    if not snapshot:
        return ""
    text = snapshot.get("text", "")
    status = snapshot.get("status", "")
    return f"{text} [{status}]" if status else str(text)


def erase_page(ctx: Context, user: str, counts: Mapping[str, int]) -> Html:
    """The confirmation step before an erasure: the person types the user id again."""
    total = sum(counts.values())
    return page(
        ctx,
        f"Erase {user}?",
        fill(
            '<p class="danger">This removes every record, history entry, session state, checkpoint and chat message '
            "stored for this user ({} rows). It cannot be undone.</p>"
            '<form method="post" action="{}" class="erase">{}<input type="hidden" name="user" value="{}">'
            '<label>Type the user id to confirm: <input name="confirm" autocomplete="off" required></label> '
            '<button type="submit" name="op" value="erase" class="danger">Erase for good</button></form>'
            '<p><a href="{}">Cancel</a></p>',
            total,
            ctx.link("/action"),
            ctx.token_field(),
            user,
            ctx.link("/user", user=user),
        ),
    )


def error_page(ctx: Context, status: int, message: str, back: str = "") -> Html:
    link = fill('<p><a href="{}">Back</a></p>', back) if back else Html("")
    return page(ctx, f"Error {status}", link, error=message)


def export_json(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str).encode()
