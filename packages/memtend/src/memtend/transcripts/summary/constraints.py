"""Which sentences of the user's are instructions that constrain the work, and which of them a later one replaced.

An instruction is kept in the user's own words when it has any of these forms (questions only when they are
requests, "Could you make sure...?"):

* a marker word: must, never, always, don't, only, without, avoid, prefer, make sure, should, at most, ...;
* a limit: a number with a bound ("under 500 dollars", "40 requests a minute", "tops out at 2,000", "two
  reviewers per change, minimum");
* a prohibition or protected area: "off limits", "stays out of the logs", "read-only", "nothing ... yet";
* a request to be asked first: "past me first", "ping me before", "until I say so", "let me see ... before";
* a preference or permission: "I'd like", "I want", "is fine", "you can";
* an imperative of three words or more ("Leave the legacy folder alone.", "Copy Priya on ..."), except the
  first sentence of the goal message, which is the task itself;
* a sentence opened by a change of mind ("Change of plan: ...", "Scratch that, ...", "Update: ...").

Not instructions: a one-off request, that is an imperative of the last kind that hands the user something now
("Tell me a joke", "Show me the cheapest option") and names no scope or condition ("every", "before", "when",
...) that would make it a standing rule; and the steps of a numbered or bulleted list, which are a plan (kept
whole and in order by the summariser), as is the line introducing the list ("Here is the order I want:"),
unless a step carries a marker word or a limit itself.

A later instruction replaces an earlier one when it announces a change ("scratch that", "change of plan",
"update:", "actually", "instead", "... is fine now") and shares a content word with it, or announces it more
softly ("now", "from now on") and shares two, or when it restates it: the same subject (two thirds of the
words shared, once values are set aside) with another value (a number, a time, a day, an address); each revision
replaces one instruction, the one it shares most with (words for times and amounts, which are what a revision
changes, count less). The earlier one is kept,
marked :data:`REPLACED`, so nothing the user said is lost and only the latest version reads as current.
"""

from __future__ import annotations

import re

__all__ = ["REPLACED", "is_instruction", "is_marked", "is_replaced", "list_items", "mark_replaced", "user_instructions"]

# A pasted document full of "must" is not a list of instructions: at most this many per message.
PER_MESSAGE = 10
REPLACED = " [replaced by a later instruction]"

_MARKERS = re.compile(
    r"\b(?:must|mustn't|never|always|don't|do not|dont|only|without|avoid|prefer|preferably|rather than|"
    r"instead of|make sure|ensure|be sure|remember to|no more than|not more than|at most|at least|"
    r"under no circumstances|not allowed|forbidden|should|shouldn't|should not|need to|needs to|"
    r"have to|has to|required|stick to|keep it|keep them|keep all|keep every|limit|from now on|"
    r"going forward|refrain|no later than|before you|ask me before|check with me)\b"
    # prohibitions and protected areas
    r"|\b(?:off[ -]limits|out of bounds|read[ -]only|hands off|stays? (?:out|away|off)|keeps? (?:out|away|off)"
    r"|(?:is|are) not to be|nothing (?:gets|goes|is|leaves)|no one|nobody)\b"
    # asked first
    r"|\b(?:past me|by me first|my (?:ok|okay|approval|sign-?off|go-?ahead|say-?so)|until i say|after i say"
    r"|i say so|(?:ask|check with|ping|tell|consult|call|warn) me|let me (?:see|review|approve|check|sign|read))\b"
    # preferences and permissions
    r"|\b(?:i'd like|i would like|i want|we want|we'd like|i'd rather|we'd rather|works best|is fine|are fine"
    r"|is okay|are okay|you can|you may|allowed to|permitted|hold off|wait until|not until|not before"
    r"|no earlier than|no sooner than)\b",
    re.IGNORECASE,
)
_NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|fifty|hundred|a dozen)"
_LIMIT = re.compile(
    r"\b(?:under|below|above|over|up to|upto|max(?:imum)?|min(?:imum)?|cap(?:ped)?|ceiling|floor|tops? out|per"
    r"|each|or (?:less|fewer|more)|within|a (?:minute|second|day|week|month|night|person|head)|budget)\b"
    r"[^.!?]{0,40}?\b" + _NUMBER + r"\b"
    r"|\b" + _NUMBER + r"\b[^.!?]{0,40}?\b(?:max(?:imum)?|min(?:imum)?|tops|at most|or (?:less|fewer|more)"
    r"|per|a (?:minute|second|day|week|month|night)|each)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(r"^(?:please|can you|could you|would you|will you)\b", re.IGNORECASE)
# Words that may open a sentence before its verb: "Also, copy ...", "Update: send ...", "Oh and please keep ...".
_LEAD_IN = re.compile(
    r"^(?:(?:also|and|so|oh|then|but|now|ok|okay|right|please|just|plus|one more thing|by the way|btw|and also)"
    r"\b[\s,:;.!-]*)+|^[^:.!?]{1,30}:\s+",
    re.IGNORECASE,
)
_VERBS = frozenset(
    """keep leave run ping hold stay send copy cc bcc book use skip cap let get put make give take tell ask check
    call wait stop start try write add remove delete move limit set report loop email mail notify post share
    include exclude drop treat label tag mark route store archive schedule reply respond answer translate format
    sign stick budget confirm verify review test merge deploy push cancel refund charge pay order buy reserve pick
    choose prioritise prioritize focus mention cite attach name spell address sort group split round convert
    escalate flag assign close lock unlock raise lower reduce increase hide print save backup document log note
    track follow obey respect avoid prefer ensure remember double-check stay limit restrict cut split bill invoice
    quote price reach contact text message forward rename clean tidy freeze pause resume rotate encrypt redact
    anonymise anonymize mask lock require need treat""".split()
)
_TRIVIAL = re.compile(
    r"^(?:carry on|go on|go ahead|keep going|continue|proceed|let me know|let me check|let me think|let's see"
    r"|thanks|thank you|see you|take care)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_ASKED_ME = re.compile(r"\b(?:ask|check with|ping|tell|consult|call|warn) me\b", re.IGNORECASE)
# Words that make an imperative a standing rule rather than a one-off request.
_SCOPE = frozenset(
    "every each any anything anyone all whenever always nothing before after until unless when if".split()
)
# A sentence opened like this changes an earlier instruction, so it is one.
_REVISION_LEAD = re.compile(
    r"^(?:scratch that|change of plan|changed? my mind|on second thought|correction|update|new plan|actually)\b",
    re.IGNORECASE,
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z'-]*", text.lower())


def is_instruction(sentence: str, *, goal: bool = False) -> bool:
    """Does this sentence of the user's constrain the work (see the module's rules)? ``goal``: it states the
    task, so its imperatives are the task rather than a constraint on it."""
    text = sentence.replace("’", "'").strip()
    if text.endswith("?") and not _REQUEST.match(text):
        return False
    words = _words(_LEAD_IN.sub("", text))
    if len(words) >= 3 and words[0] in _VERBS and _one_off(words) and not _LIMIT.search(text):
        # "Tell me a joke": "tell me" asks to be told first only with a condition ("tell me before ...")
        return bool(_MARKERS.search(_ASKED_ME.sub(" ", text)))
    if _MARKERS.search(text) or _LIMIT.search(text) or _REVISION_LEAD.match(text):
        return True
    if goal or _TRIVIAL.match(text):
        return False
    return len(words) >= 3 and words[0] in _VERBS and not _one_off(words)


def _one_off(words: list[str]) -> bool:
    """An imperative that hands the user something now ("tell me a joke", "show me the cheapest option") and
    names no scope or condition that would make it a standing rule."""
    return words[1] in ("me", "us") and not _SCOPE.intersection(words)


def _marked(text: str) -> bool:
    return bool(_MARKERS.search(text) or _LIMIT.search(text))


def is_marked(text: str) -> bool:
    """Does the text carry a marker word (must, never, always, prefer, ...) or a limit: a standing rule, not a
    task step ("Check node n3")?"""
    return _marked(text)


def user_instructions(text: str, *, goal: bool = False) -> list[str]:
    """The instruction sentences of one user message, verbatim, at most ``PER_MESSAGE``. ``goal``: the message
    states the task, and its first sentence is the task itself. The steps of a list are a plan, not
    instructions, unless one carries a marker word or a limit (see :func:`list_items`)."""
    steps = set(list_items(text))
    out: list[str] = []
    seen = 0  # sentences read: the goal message's first one is the task
    lines = text.split("\n")
    for number, line in enumerate(lines):
        item = _LIST_ITEM.match(line)
        if item is not None:
            if _marked(item.group(1)):
                out.append(item.group(1).strip())
            continue
        introduces = line.rstrip().endswith(":") and any(
            _LIST_ITEM.match(rest) for rest in lines[number + 1 : number + 2]
        )
        for sentence in (s.strip() for s in _SENTENCES.split(line) if s and s.strip()):
            first, seen = goal and seen == 0, seen + 1
            heading = introduces and sentence.endswith(":")
            if not heading and sentence not in steps and is_instruction(sentence, goal=first):
                out.append(sentence)
    return out[:PER_MESSAGE]


_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(\S.*)$")


def list_items(text: str) -> list[str]:
    """The items of the last numbered or bulleted list in ``text`` (two items at least), in order, whole."""
    runs: list[list[str]] = [[]]
    for line in text.split("\n"):
        item = _LIST_ITEM.match(line)
        if item is not None:
            runs[-1].append(item.group(1).strip())
        elif line.strip() and runs[-1]:
            runs.append([])
    found = [run for run in runs if len(run) >= 2]
    return found[-1] if found else []


# -- revisions ------------------------------------------------------------------------------------------------

_STRONG_CHANGE = re.compile(
    r"\b(?:scratch that|change of plan|changed? my mind|on second thought|actually|correction|instead|update"
    r"|updated|is fine|are fine|is okay|are okay|you can now|no longer|not any ?more|anymore|new (?:limit|cap"
    r"|ceiling|budget|rule|deadline|plan)|let's (?:raise|lower|change|move|make|switch|go)|raise|lower|bump|switch"
    r"|replace|revised?)\b",
    re.IGNORECASE,
)
_SOFT_CHANGE = re.compile(r"\b(?:now|from now on|going forward|from today|these days|new)\b", re.IGNORECASE)
_STOP = frozenset(
    """the a an and or but for to of in on at by with from into onto than then that this these those it its is are
    was were be been being do does did not no yes you your yours we our us i me my mine they them their he she his
    her all any each every some more most less least very too also just only now new can could would should will
    shall may might must please thanks okay ok let lets let's get got make made keep want like about after before
    until when while there here what which who whom how why one two three change plan update actually instead
    scratch fine sure thing things""".split()
)


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _content(text: str) -> set[str]:
    return {_stem(w) for w in _words(text.removesuffix(REPLACED)) if len(w) >= 3 and w not in _STOP}


def _verbs(text: str) -> set[str]:
    """The verbs opening the clauses of an instruction ("send" in "Change of plan: send the reports ...")."""
    out = set()
    for clause in re.split(r"[.:;,!?]+", text.removesuffix(REPLACED)):
        words = [w for w in _words(clause) if w not in ("let's", "lets", "please", "also", "just", "then")]
        if words and words[0] in _VERBS:
            out.add(_stem(words[0]))
    return out


# Words that say when, how much or how often: what a revision changes, not what it is about. They count for a
# quarter of a subject word when matching a revision to what it revises ("Afternoons are fine for the fitters
# too now, but not Fridays" revises "Book the fitters for mornings only", not "Skip the Friday afternoon slots").
# A verb opening a clause (what to do) counts half: the object says what the instruction is about.
_VALUE_WORDS = re.compile(
    r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend|morning|afternoon|evening|night"
    r"|today|tomorrow|daily|weekly|monthly|yearly|hour|minut|minute|day|week|month|year|january|february|march"
    r"|april|june|july|august|september|october|november|december|dollar|euro|pound|percent|cent|minimum|maximum"
    r"|twice|once|first|last|next|early|late|later|earlier|only|least)$"
)


def _overlap(revision: set[str], other: set[str], verbs: set[str]) -> float:
    return sum(0.25 if _VALUE_WORDS.match(w) else 0.5 if w in verbs else 1.0 for w in revision & other)


_NUMBER_WORD = re.compile(r"^" + _NUMBER + r"$", re.IGNORECASE)


def _is_value(token: str) -> bool:
    t = token.strip(".,;:!?()\"'").lower()
    return bool(t) and bool(
        any(c.isdigit() for c in t) or "@" in t or _NUMBER_WORD.match(t) or _VALUE_WORDS.match(_stem(t))
    )


def _values(text: str) -> set[str]:
    """What an instruction sets: its numbers, times, addresses, and words for days, periods and amounts."""
    return {t.strip(".,;:!?()\"'").lower() for t in text.removesuffix(REPLACED).split() if _is_value(t)}


def _subject(text: str) -> set[str]:
    """An instruction's content words once its values are set aside: what it is about."""
    return _content(" ".join(t for t in text.removesuffix(REPLACED).split() if not _is_value(t)))


def _restates(later: tuple[set[str], set[str]], earlier: tuple[set[str], set[str]]) -> bool:
    """The same subject (two thirds of the words of either, once values are set aside) set to another value."""
    (subject, values), (old_subject, old_values) = later, earlier
    shared = subject & old_subject
    return (
        bool(shared)
        and 3 * len(shared) >= 2 * len(subject | old_subject)
        and bool(values)
        and bool(old_values)
        and values != old_values
    )


def is_replaced(constraint: str) -> bool:
    return constraint.endswith(REPLACED)


def mark_replaced(constraints: list[str]) -> list[str]:
    """The constraints in order, each earlier one that a later one revises marked with :data:`REPLACED`.

    A constraint that announces a change revises one constraint: the one before it that it shares the most
    content words with (at least one word when the change is announced plainly, two when softly; words saying
    when or how much, which are what a revision changes, count a quarter and verbs opening a clause half; on a
    tie, the nearest before it) and that no other revision took. Lists merged from several accounts may put a
    revision before what it revises: when nothing before it matches, a constraint after it that announces no
    change is taken instead. A constraint that announces nothing but restates one before it (the same subject
    set to another value: "Recording happens on Thursdays." after "Recording happens on Tuesdays.") revises
    that one.

    The matching is done afresh on every call, marks ignored, so marking twice, or a list merged from marked
    ones, never makes a revision take a second one. A mark already present stays unless a revision in the list
    could have taken that constraint and took another (the mark was a wrong guess made on a shorter list).
    """
    bare = [c.removesuffix(REPLACED) for c in constraints]
    # copies of one constraint (a model's restatement beside the user's words) stand or fall together
    keys = [" ".join(_words(c)) for c in bare]
    words = [_content(c) for c in bare]
    verbs = [_verbs(c) for c in bare]
    announces = [bool(_STRONG_CHANGE.search(c) or _SOFT_CHANGE.search(c)) for c in bare]
    settings = [(_subject(c), _values(c)) for c in bare]
    taken: set[str] = set()
    reachable: set[str] = set()  # constraints some revision could have taken
    for later, text in enumerate(bare):
        needed = 1 if _STRONG_CHANGE.search(text) else 2 if _SOFT_CHANGE.search(text) else 0
        if not needed:
            # no change announced: a restatement of an earlier one with another value still revises it
            before = [i for i in range(later) if keys[i] != keys[later] and _restates(settings[later], settings[i])]
            after = []
        else:
            before = [i for i in range(later) if len(words[i] & words[later]) >= needed and keys[i] != keys[later]]
            after = [
                i for i in range(later + 1, len(bare)) if not announces[i] and len(words[i] & words[later]) >= needed
            ]
        if not before and not after:
            continue
        reachable.update(keys[i] for i in (*before, *after))
        for candidates in (before, after):
            best, best_shared = -1, 0.0
            for other in candidates:
                shared = _overlap(words[later], words[other], verbs[later] | verbs[other])
                if keys[other] not in taken and shared >= best_shared:
                    best, best_shared = other, shared
            if best >= 0:
                taken.add(keys[best])
                break
    marked = {keys[i] for i, c in enumerate(constraints) if is_replaced(c)}
    return [
        text + REPLACED if keys[i] in taken or (keys[i] in marked and keys[i] not in reachable) else text
        for i, text in enumerate(bare)
    ]
