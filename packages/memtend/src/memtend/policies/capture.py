"""Capture: which parts of a turn are worth keeping in long-term memory, each with the reason it was kept or not.

Pure: it reads messages and returns judgements; nothing here stores anything. The offline rules read structure
before words, and keep only what they are confident about, which is what the user said of themselves:

* who said it: only the user's own turns are read. The assistant's replies are not the user's voice, and tool
  results are raw output that can be looked up again (``tool`` turns, and assistant turns that relay one);
* what kind of sentence it is: questions ask rather than state, and acknowledgements and short remarks
  ("Understood.", "ok thanks") carry nothing a later session needs;
* whether it is a request or an instruction: an imperative handing the user something now ("Tell me a joke") is
  a one-off request (:func:`memtend.transcripts.summary.constraints.is_instruction` tells those from
  instructions), and so is one asking for something made now ("List three novels under 300 pages") whatever its
  limit, unless a word of time makes it standing. An instruction to the assistant, with a marker word or a limit
  ("Keep every reply under 100 words", "Never deploy on Fridays"; not a task step such as "Check node n3"), is
  a constraint of the conversation: the session's constraints own it (:data:`CONSTRAINT_REASON`), so it is
  dropped here, with that reason, and never recalled beside the revision that replaced it; when the
  conversation ends, those still in force, each in its latest version only, are kept as standing preferences
  (:func:`standing_at_end`). What the user says of themselves ("I prefer short answers") is theirs to keep,
  below;
* whether it is a first-person statement: "I ...", "my ...", "we ..." in the user's turn, read after its lead-in
  words, and after the clause of a correction marker that opens it ("Scratch that about Rotterdam, I moved ...").
  Among those, a statement of where the user lives, their name or employer ("call me Tom" too), or "my <thing> is
  <value>", has one answer and becomes a keyed fact (``home.city``), also when a later clause states it ("I no
  longer work at A, I work at B now"); the value stops at a clause boundary or a word of time ("PST now"), and
  "my <someone> is <doing> ..." is an event, not an attribute (dropped). A choice with its reason is a decision;
  work in progress is unfinished-work state; a liking or a standing instruction is a preference; a statement that
  announces a change (:func:`memtend.policies.text_features.update_sentences`) is a correction; other
  first-person statements of four words or more are kept as what the user said of themselves, unless they speak
  only of this moment ("right now", "today") or give a passing opinion ("I think so").

Everything else is dropped, with its reason. Once the write gate has masked a candidate, one whose value (a fact's
value, a note's text) is nothing but redaction markers and punctuation is dropped too (:func:`secret_only`): "My
card is 4111 ..." would otherwise become the fact ``card: [REDACTED:card]``, a memory of nothing. An LLM extractor
(:mod:`memtend.capture.extractor`) can replace these rules; its answer is validated against :func:`check_candidate`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from memtend.policies import text_features
from memtend.policies.gate import redact
from memtend.policies.gate.common import MARKER, MARKER_PREFIX
from memtend.policies.precedence import canonical_key, fact_text
from memtend.records import Source
from memtend.transcripts.messages import Message, ensure_messages
from memtend.transcripts.summary.constraints import is_instruction, is_marked

__all__ = [
    "CONSTRAINT_REASON",
    "STANDING_REASON",
    "Candidate",
    "CandidateKind",
    "Dropped",
    "Judgement",
    "is_standing_instruction",
    "judge_turns",
    "revised_instruction",
    "secret_only",
    "standing_at_end",
]


class CandidateKind(str, Enum):
    """What a kept statement is; a ``fact`` has a key (one answer), the others are stored as notes."""

    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    CORRECTION = "correction"
    STATE = "state"  # the state of unfinished work
    STATEMENT = "statement"  # something else the user said of themselves

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Candidate:
    """Something worth keeping: its kind, the text to store, why, and the turn it came from (index in the
    messages given, and that message's id if it has one). A ``fact`` carries its ``key`` and ``value``."""

    kind: CandidateKind
    text: str
    reason: str
    turn: int
    turn_id: str = ""
    key: str = ""
    value: str = ""
    source: Source = Source.USER


@dataclass(frozen=True)
class Dropped:
    """Part of a turn that is not kept, and why."""

    text: str
    reason: str
    turn: int
    turn_id: str = ""


Judgement = Candidate | Dropped

# An instruction to the assistant ("Keep every reply under 100 words", "Never suggest jQuery") belongs to the
# conversation's constraints (:meth:`memtend.UserMemory.constraints`, :func:`memtend.prompt_context.
# conversation_constraints`), which show it on every turn and replace it when the user revises it. Kept in
# long-term memory as well, it would be recalled beside its own revision, so capture leaves it there.
CONSTRAINT_REASON = (
    "an instruction for the conversation: the session's constraints keep it (re-injected every turn, replaced "
    "when revised), not long-term memory"
)

# -- sentence forms -----------------------------------------------------------------------------------------
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD_IN = re.compile(
    r"^(?:(?:actually|oh|so|and|also|well|btw|by the way|fyi|just so you know|no|yes|yeah|ok|okay|thanks|thank you"
    r"|update|correction"
    r"|scratch that|change of plan|one more thing)\b[\s,:;.!-]*)+",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|my|we|we're|we've|we'll|our|me)\b", re.IGNORECASE)
_PASSING = re.compile(
    r"^(?:i|we) (?:think|guess|suppose|see|understand|mean|know|wonder|hope|agree|feel|get it|believe)\b"
    r"|^i(?:'m| am) (?:not sure|sure|glad|happy|sorry|afraid|bored|tired|hungry|done|back|here|ready|curious)\b",
    re.IGNORECASE,
)
_THIS_MOMENT = re.compile(r"\b(?:right now|at the moment|today|tonight|this (?:morning|afternoon|evening))\b", re.I)
# a value: a run of capitalised words ("Porto", "New York", "Acme Corp")
_PROPER = r"(?-i:(?P<value>[A-Z][\w'&-]*(?:\s+(?:[A-Z][\w'&-]*|de|da|do|of|la|le|von|van)(?=\s+[A-Z]|\b))*))"
_KEYED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "home.city",
        re.compile(
            r"^(?:i|we)(?:'ve| have)?(?: just| recently| finally)? (?:moved|relocated) (?:back )?to "
            + _PROPER
            + r"|^(?:i|we) (?:now |still )?live in "
            + _PROPER.replace("value", "value2")
            + r"|^(?:i'm|i am|we're|we are) (?:now |currently )?(?:living|based) in "
            + _PROPER.replace("value", "value3")
            + r"|^my home (?:town |city )?is (?:in )?"
            + _PROPER.replace("value", "value4"),
            re.IGNORECASE,
        ),
    ),
    ("name", re.compile(r"^(?:my name is|call me|my name's) " + _PROPER, re.IGNORECASE)),
    ("work.employer", re.compile(r"^(?:i|we) (?:now )?work (?:at|for) " + _PROPER, re.IGNORECASE)),
)
# the value stops at a comma or semicolon: "My editor is now Helix, I switched last week" still has one answer
# (and at a word of time, _VALUE_END)
_MY_THING = re.compile(
    r"^my (?P<thing>(?:[a-z]+ ){0,2}[a-z]+) (?:is|are|'s) (?:(?:now|still|currently) )?"
    r"(?P<value>[^,;]{1,60}?)(?:\s*[,;].*)?[.!]?$",
    re.IGNORECASE,
)
_NOT_KEYS = frozenset("it this that one favorite bad fault pleasure turn guess point question".split())
# a value stops at a word of time: "PST now", "Helix these days", "Lisbon since March" have the one answer before it
_VALUE_END = re.compile(
    r"\s+(?:now|currently|nowadays|these days|at the moment|for now|any ?more|again|still|lately|recently|since"
    r"|as of|until|till|(?:last|this|next) (?:week|month|year|spring|summer|autumn|fall|winter))\b.*$",
    re.IGNORECASE,
)
# "my <someone> is <doing> ...": what someone or something is doing, an event rather than an attribute of the user
_PROGRESSIVE = re.compile(
    r"^my (?:[a-z'-]+ ){0,2}[a-z'-]+ (?:is|are|'s) (?:(?:still|always|constantly|just|currently|now|busy) )?"
    r"(?P<verb>[a-z]{2,}ing)\b",
    re.IGNORECASE,
)
_ING_NOUNS = frozenset(
    "thing something nothing anything everything morning evening ring king spring string wedding building meeting"
    " ceiling sibling darling pudding".split()
)
# an imperative that asks for something made now (a list, a draft, an answer): a one-off request unless a word of
# time makes it standing ("Never suggest ...", "Always answer in German"); a limit alone ("under 300 pages")
# bounds this one answer
_PRODUCES = frozenset(
    """list write draft give make find show tell suggest recommend summarise summarize translate convert explain
    calculate compute name describe compare generate create compose plan outline recap rewrite rephrase fix
    check look search pick choose book send""".split()
)
_STANDING = re.compile(
    r"\b(?:always|never|from now on|going forward|(?:in|for) (?:the )?future|every time|each time|whenever"
    r"|by default|ever|any ?more|every|daily|weekly|monthly|on (?:week(?:day|end)|(?:mon|tues|wednes|thurs|fri|satur"
    r"|sun)day)s)\b",
    re.IGNORECASE,
)
# a correction marker that opens a sentence, with the rest of its clause ("Scratch that about Rotterdam, ...")
_MARKER_CLAUSE = re.compile(
    r"^(?:actually|correction|update|scratch that|change of plan|on second thought)\b[^,;:]*[,;:]\s*",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"\s*[,;:]\s+|\s+(?:-|\u2013|\u2014)\s+")
_DECISION = re.compile(
    r"^(?:i|we)(?:'ve| have| had)? (?:decided|chosen|chose|picked|settled on|opted|agreed)\b"
    r"|^(?:i'll|i will|we'll|we will|i'm going to|we're going to|let's) (?:go|stick) with\b",
    re.IGNORECASE,
)
# a sentence opened by a change of mind, or saying that what held before holds no longer
_REVISION = re.compile(
    r"^(?:actually|no[,.!]|correction|update:|scratch that|change of plan|on second thought)"
    r"|\b(?:no longer|not any ?more|anymore|instead)\b",
    re.IGNORECASE,
)
_BECAUSE = re.compile(r"\b(?:because|since|as|so that|given that)\b\s+(?P<why>.+)$", re.IGNORECASE)
_STATE = re.compile(
    r"\b(?:still (?:working on|need to|have to|haven't|to do)|in the middle of|halfway through|haven't (?:finished"
    r"|done|started)|not (?:done|finished) yet|left off|next (?:i|we) (?:need|have|want) to|picking (?:this|it) up"
    r"|will (?:continue|finish|pick (?:this|it) up))\b",
    re.IGNORECASE,
)
_LIKING = re.compile(
    r"^(?:i|we) (?:really |much |strongly |usually |always |generally )?(?:prefer|like|love|hate|dislike|enjoy"
    r"|can't stand|don't like|do not like|don't eat|never eat|avoid)\b|^i(?:'m| am) (?:allergic|vegetarian|vegan)\b",
    re.IGNORECASE,
)
_ACK = re.compile(
    r"^(?:ok(?:ay)?|k|sure|thanks?|thank you|thx|cool|great|nice|got it|understood|right|yes|yeah|yep|no|nope|fine"
    r"|perfect|sounds good|alright|hello|hi|hey|bye|good(?: morning| night)?|lol|haha)\b",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower())


def _key_of(thing: str) -> str:
    return "_".join(_words(thing))


def _keyed(body: str) -> tuple[str, str] | None:
    """(key, value) when a first-person sentence states a fact with one answer."""
    for key, pattern in _KEYED:
        m = pattern.match(body)
        if m is not None:
            value = next(v for v in m.groups() if v)
            return key, value.strip().rstrip(".")
    m = _MY_THING.match(body)
    if m is not None:
        thing, value = m.group("thing"), _VALUE_END.sub("", m.group("value").strip())
        words = _words(thing)
        if (
            words
            and words[-1] not in _NOT_KEYS
            and words[0] not in _NOT_KEYS
            and 0 < len(_words(value)) <= 6
            and not _is_progressive(body)
        ):
            return _key_of(thing), value
    return None


def _keyed_clause(body: str) -> tuple[str, str] | None:
    """(key, value) from the sentence, or else from a later clause that states it: "I no longer work at A, I work
    at B now" has its one answer in the second clause."""
    keyed = _keyed(body)
    if keyed is not None:
        return keyed
    for clause in _CLAUSES.split(body)[1:]:
        clause = _LEAD_IN.sub("", clause).strip()
        if _FIRST_PERSON.match(clause) or clause.lower().startswith("call me "):
            keyed = _keyed(clause)
            if keyed is not None:
                return keyed
    return None


def _is_progressive(body: str) -> bool:
    m = _PROGRESSIVE.match(body)
    return m is not None and m.group("verb").lower() not in _ING_NOUNS


def _body(sentence: str) -> str:
    """The sentence without its lead-in words, and without a correction marker's clause when the statement
    follows it ("Scratch that about Rotterdam, I moved to Utrecht" reads from "I moved")."""
    text = sentence.replace("\u2019", "'")
    body = _LEAD_IN.sub("", text).strip()
    if not _FIRST_PERSON.match(body):
        m = _MARKER_CLAUSE.match(text.strip())
        rest = _LEAD_IN.sub("", text.strip()[m.end() :]).strip() if m is not None else ""
        if rest and _FIRST_PERSON.match(rest):
            return rest
    return body


def judge_sentence(sentence: str, turn: int, turn_id: str = "") -> Judgement:
    """One sentence of the user's: the candidate it makes, or why it is dropped."""
    body = _body(sentence)
    words = _words(body)
    if text_features.is_question(sentence):
        return Dropped(sentence, "a question: it asks, it states nothing to keep", turn, turn_id)
    correction = bool(_REVISION.search(sentence))
    change = correction or bool(text_features.update_sentences(sentence))
    # the keyed forms name the user themselves ("my name is", "call me", "I work at"), so they are read first
    keyed = _keyed_clause(body) if words else None
    if not words or (keyed is None and len(words) <= 3 and (_ACK.match(sentence) or not _FIRST_PERSON.match(body))):
        return Dropped(sentence, "an acknowledgement or a short remark", turn, turn_id)
    if _FIRST_PERSON.match(body) or keyed is not None:
        if keyed is not None:
            key, value = keyed
            why = "the user corrects" if correction else "the user states a change of" if change else "the user states"
            return Candidate(
                CandidateKind.FACT,
                sentence,
                f"{why} their {key.replace('_', ' ').replace('.', ' ')} (one answer)",
                turn,
                turn_id,
                key=key,
                value=value,
            )
        if _DECISION.match(body):
            because = _BECAUSE.search(body)
            why = f", because {because.group('why').rstrip('.')}" if because else " (no reason given)"
            return Candidate(CandidateKind.DECISION, sentence, f"a decision the user made{why}", turn, turn_id)
        if _STATE.search(body):
            return Candidate(CandidateKind.STATE, sentence, "the state of unfinished work", turn, turn_id)
        if _LIKING.match(body):
            return Candidate(CandidateKind.PREFERENCE, sentence, "a preference the user states", turn, turn_id)
        if correction:
            return Candidate(
                CandidateKind.CORRECTION, sentence, "the user corrects something said before", turn, turn_id
            )
        if _PASSING.match(body):
            return Dropped(sentence, "a passing remark about the conversation", turn, turn_id)
        if _THIS_MOMENT.search(body):
            return Dropped(sentence, "speaks only of this moment", turn, turn_id)
        if _is_progressive(body):
            return Dropped(sentence, "says what someone or something is doing: an event, not the user's", turn, turn_id)
        if len(words) >= 4:
            return Candidate(CandidateKind.STATEMENT, sentence, "the user says this of themselves", turn, turn_id)
        return Dropped(sentence, "too short to be a durable statement", turn, turn_id)
    if _STATE.search(body):
        return Candidate(CandidateKind.STATE, sentence, "the state of unfinished work", turn, turn_id)
    if is_instruction(sentence) and is_marked(sentence):  # a task step ("Check node n3") is no standing rule
        if _asks_for_something_now(body):
            return Dropped(
                sentence, "a one-off request: it asks for something now, with no word of time", turn, turn_id
            )
        return Dropped(sentence, CONSTRAINT_REASON, turn, turn_id)
    if words and len(words) >= 2 and not _FIRST_PERSON.match(body) and _is_request(body):
        return Dropped(sentence, "a one-off request", turn, turn_id)
    return Dropped(sentence, "not a statement of the user's about themselves (chit-chat or a remark)", turn, turn_id)


def _asks_for_something_now(body: str) -> bool:
    words = _words(re.sub(r"^(?:please|just)\b[\s,]*", "", body, flags=re.IGNORECASE))
    return bool(words) and words[0] in _PRODUCES and not _STANDING.search(body)


def _is_request(body: str) -> bool:
    return bool(
        re.match(r"^(?:please|can you|could you|would you|tell|show|give|write|find|make|help|let)\b", body, re.I)
    )


def judge_turns(messages: Iterable[Message], *, offset: int = 0) -> list[Judgement]:
    """What each turn leaves: candidates from the user's turns, and what was dropped with its reason. ``offset``
    is added to each turn's index (the index of the first message in the whole conversation)."""
    out: list[Judgement] = []
    after_tool = False
    for index, message in enumerate(ensure_messages(messages)):
        turn, turn_id = index + offset, message.id or ""
        if message.role == "user":
            after_tool = False
        if message.role == "tool":
            after_tool = True
            out.append(Dropped(message.content[:200], "raw tool output: it can be looked up again", turn, turn_id))
            continue
        if not message.content.strip() or _is_summary(message):
            continue
        if message.role == "assistant":
            why = "relays tool output" if after_tool else "the assistant's words, not the user's"
            out.append(Dropped(message.content[:200], why, turn, turn_id))
            continue
        if message.role != "user":
            continue
        out.extend(judge_sentence(s, turn, turn_id) for s in _sentences(message.content))
    return out


def _is_summary(message: Message) -> bool:
    from memtend.transcripts.summary.schema import is_summary_message

    return is_summary_message(message)


STANDING_REASON = "a standing instruction the user gave, in force when the conversation ended (its latest version)"


def standing_at_end(conversation: Iterable[Message], *, offset: int = 0) -> list[Candidate]:
    """The instructions capture left to the conversation's constraints (:data:`CONSTRAINT_REASON`) that are still
    in force when it ends, each in its latest version only (a revised one never with the version it replaced), as
    preferences to keep; each names the last user turn that said it (``offset``: the first message's index)."""
    from memtend.transcripts.summary import extract_constraints
    from memtend.transcripts.summary.constraints import is_replaced

    items = ensure_messages(conversation)
    users = [(i, m) for i, m in enumerate(items) if m.role == "user" and not _is_summary(m)]
    out: list[Candidate] = []
    for text in extract_constraints(items):
        if is_replaced(text):
            continue
        index, said = next(((i, m) for i, m in reversed(users) if text in m.content), (len(items) - 1, None))
        turn, turn_id = max(index, 0) + offset, (said.id or "") if said is not None else ""
        judged = judge_sentence(text, turn, turn_id)
        if isinstance(judged, Dropped) and judged.reason == CONSTRAINT_REASON:
            out.append(Candidate(CandidateKind.PREFERENCE, text, STANDING_REASON, turn, turn_id))
    return out


def is_standing_instruction(text: str) -> bool:
    """Is ``text`` (a stored note) an instruction to the assistant, by the test that kept it at a session's end?"""
    judged = judge_sentence(text, 0)
    return isinstance(judged, Dropped) and judged.reason == CONSTRAINT_REASON


def revised_instruction(kept: Sequence[str], new: str) -> int | None:
    """The index in ``kept`` (instructions already in long-term memory, oldest first) of the one that ``new``, kept
    at a later session's end, revises by the rule a conversation's constraints follow
    (:func:`memtend.transcripts.summary.constraints.mark_replaced`), or None; None too when one of ``kept`` would
    revise ``new`` instead (a restatement beside an announced change: which came last is not for the rule to say)."""
    from memtend.transcripts.summary.constraints import is_replaced, mark_replaced

    before = [is_replaced(c) for c in mark_replaced(list(kept))]
    after = mark_replaced([*kept, new])
    if is_replaced(after[-1]):
        return None
    taken = [i for i, c in enumerate(after[:-1]) if is_replaced(c) and not before[i]]
    return taken[0] if len(taken) == 1 else None


def candidates(judgements: Sequence[Judgement]) -> list[Candidate]:
    return [j for j in judgements if isinstance(j, Candidate)]


def secret_only(candidate: Candidate, masked: str, kinds: Sequence[str]) -> Dropped | None:
    """``candidate`` dropped, when the gate masked it (``masked``: the text it would be stored as; ``kinds``: what
    the gate masked) and nothing of its value is left but redaction markers and punctuation; else None. The dropped
    text is the sentence masked, so the report never shows the secret."""
    if not kinds or MARKER_PREFIX not in masked:
        return None
    value = masked
    if candidate.kind is CandidateKind.FACT and candidate.key:
        prefix = fact_text(canonical_key(candidate.key), "")
        value = masked[len(prefix) :] if masked.startswith(prefix) else masked
    if re.search(r"\w", MARKER.sub("", value)):
        return None
    what = ", ".join(sorted(kinds))
    return Dropped(
        redact(candidate.text),
        f"nothing but a secret ({what}), masked by the write gate: nothing left worth keeping",
        candidate.turn,
        candidate.turn_id,
    )
