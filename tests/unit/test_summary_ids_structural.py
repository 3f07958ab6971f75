"""Every id a side-effecting call returned reaches the summary's side effects, whatever its shape (issue 34).

Ids are taken from the result's structure (its JSON values, its URLs whole), so the test draws id shapes at
random, hides them in randomly shaped results among prose, amounts and flags, and checks that none is lost.
"""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from memtend.policies.gate import find_sensitive
from memtend.transcripts.messages import Message, ToolCall
from memtend.transcripts.summary import StructuredSummary, extractive_summarize
from memtend.transcripts.summary.ids import result_values

_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase


def _uuid(h: str) -> str:
    return f"{h[:8]}-{h[8:12]}-4{h[12:15]}-8{h[15:18]}-{h[18:30]}"


ids = st.one_of(
    st.text(_HEX, min_size=30, max_size=30).map(_uuid),
    st.tuples(st.text(string.ascii_uppercase, min_size=1, max_size=5), st.integers(1, 99999)).map(
        lambda t: f"{t[0]}-{t[1]}"
    ),
    st.tuples(st.integers(0, 40), st.integers(0, 99), st.integers(0, 999)).map(lambda t: f"v{t[0]}.{t[1]}.{t[2]}"),
    st.tuples(st.integers(0, 40), st.integers(0, 99), st.integers(0, 999)).map(lambda t: f"{t[0]}.{t[1]}.{t[2]}"),
    st.tuples(
        st.sampled_from(["https://app.example.com/view", "https://x.example.org/a/b", "http://h.example.net/"]),
        st.sampled_from(["id", "ref", "item", "p"]),
        st.text(string.ascii_letters + string.digits, min_size=1, max_size=12),
        st.booleans(),
    ).map(lambda t: f"{t[0]}?{t[1]}={t[2]}" + ("&lang=en" if t[3] else "")),
    st.text(_HEX, min_size=6, max_size=40),
    st.integers(1, 10**12),
    st.lists(st.text(_LOWER + string.digits, min_size=1, max_size=8), min_size=1, max_size=4).map("-".join),
)


def _names_no_secret(key: str) -> bool:
    """A field name under which the gate sees no secret (``pw``, ``pin`` and the like name a password: what the
    gate masks never reaches a summary, so it is no id to keep)."""
    if any(w in key for w in ("secret", "token", "password", "passwd", "key", "private", "credential")):
        return False
    return not find_sensitive(json.dumps({key: "00000000-0000-4000-8000-000000000000"}))


keys = st.text(_LOWER + "_", min_size=1, max_size=12).filter(_names_no_secret)
prose = st.sampled_from(["the order was placed", "Done, see the details below.", "queued for tonight", ""])
noise = st.one_of(prose, st.booleans(), st.none(), st.floats(0.5, 1e6, allow_nan=False).map(lambda f: f + 0.25))


def _embed(draw: Any, value: Any) -> Any:
    """``value`` somewhere in a random JSON document, among other fields."""
    doc: Any = value
    for _ in range(draw(st.integers(1, 3))):
        shape = draw(st.sampled_from(["object", "list"]))
        if shape == "object":
            fields = draw(st.dictionaries(keys, noise, max_size=4))
            taken = set(fields)
            fields[draw(keys.filter(lambda k, taken=taken: k not in taken))] = doc
            doc = fields
        else:
            doc = [*draw(st.lists(noise, max_size=2)), doc]
    return doc


@st.composite
def results(draw: Any) -> tuple[str, list[str]]:
    """(a tool result's text, the ids in it): JSON with ids as values, or prose holding URLs."""
    found = draw(st.lists(ids, min_size=1, max_size=4, unique_by=lambda i: str(i).casefold()))
    if draw(st.booleans()):
        doc = _embed(draw, found[0])
        for more in found[1:]:
            doc = {"result": doc, draw(keys.filter(lambda k: k != "result")): _embed(draw, more)}
        return json.dumps(doc), [str(i) for i in found]
    urls = [i for i in found if isinstance(i, str) and "://" in i] or ["https://app.example.com/view?id=42"]
    text = " ".join(f"Created it, see {url}." for url in urls)
    return text, urls


def _summary(result: str) -> StructuredSummary:
    call = ToolCall("call-1", "create_record", {"what": "a record"})
    return extractive_summarize(
        [
            Message.user("Set the new records up for the spring fair."),
            Message.assistant("", [call]),
            Message.tool(result, "call-1", name="create_record"),
            Message.assistant("The record exists now."),
        ]
    )


@settings(max_examples=150, deadline=None)
@given(results())
def test_no_id_a_side_effect_returned_is_lost(case: tuple[str, list[str]]) -> None:
    text, wanted = case
    summary = _summary(text)
    kept = [i for effect in summary.side_effects for i in effect.ids]
    assert [i for i in wanted if i not in kept] == [], (text, kept)
    # and they survive the summary's text form, which is what the transcript carries
    reread = StructuredSummary.parse(summary.render())
    assert [i for i in wanted if i not in [i for e in reread.side_effects for i in e.ids]] == []


def test_the_structural_rule() -> None:
    result = {
        "status": "live",
        "url": "https://pod.example.com/e?ep=3&s=1",
        "nights": 2,
        "price": 12.5,
        "ok": True,
        "note": "Booked, details at https://b.example.com/x?id=9. Thanks",
        "api_token": "abc123",
        "tags": ["a,b", "OPS-7"],
    }
    assert result_values(json.dumps(result)) == [
        "https://pod.example.com/e?ep=3&s=1",  # an id-named key's value comes first
        "live",
        "2",
        "https://b.example.com/x?id=9",
        "OPS-7",
    ]
    assert result_values("Form ready: https://forms.example.org/view?id=12&lang=en.") == [
        "https://forms.example.org/view?id=12&lang=en"
    ]
