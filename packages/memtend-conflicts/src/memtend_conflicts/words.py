"""The English words of a change and of whom a statement speaks: change cues, names opening a sentence, the
first person, and the people a statement is about besides its speaker (relations in other languages come from
``memtend_conflicts.relations``).

Pure: the standard library only.
"""

from __future__ import annotations

import re

from memtend.policies.text_features import NOT_NAMES, starts_sentence, statement_body

from memtend_conflicts.relations import relations_named

__all__ = ["announces_change", "first_person", "leading_names", "people"]

_CHANGES = re.compile(
    r"\b(?:moved|moving|relocated|switched|switching|changed|started|starting|began|took over|left|quit|closed"
    r"|opened|enrolled|raised|cut|lowered|pushed|postponed|rescheduled|delayed|converted|replaced|upgraded"
    r"|downgraded|new|now|nowadays|these days|anymore|any more|no longer|since|instead|from now on|turns out"
    r"|got a|became|become|migrated|transferred|joined|correction|corrected|had it wrong)\b",
    re.IGNORECASE,
)
_PEOPLE = re.compile(
    r"\b(?i:sister|brother|husband|wife|son|daughter|mother|father|mum|mom|dad|parents|parent|cousin|colleague"
    r"|coworker|co-worker|neighbou?r|friend|boss|uncle|aunt|grand(?:mother|father|ma|pa)|kids|children|child"
    r"|nephew|niece|twin|roommate|flatmate|business partner|team|clinic|vet|support desk|partner|in-law|visitor|guest"
    r"|designer|baby|youngest|eldest|next door|gran|granny|grandad|granddad)s?\b"
    r"|\b(?!(?i:it|that|there|here|what|who|where|let|he|she|everyone|everything|nobody|today|tonight|tomorrow"
    r"|yesterday|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june"
    r"|july|august|september|october|november|december)'s)"  # a day's or month's is nobody's ("November's rent")
    r"[A-Z][a-z]+'s\b",
)


# "new" says something changed when it is somebody's or the one now ("a new job", "my new number", "New mobile:"),
# not when it opens a name ("New Year's Eve", "New York") or speaks of new things in general ("rates for new fixes")
_OTHER_NEW = re.compile(
    r"(?-i:\bNew(?=\s+[A-Z]))|(?<!\ba )(?<!\ban )(?<!\bmy )(?<!\bour )(?<!\bthe )(?<!\bhis )(?<!\bher )(?<!\btheir )"
    r"(?<!^)(?<!\bbrand )\bnew\b",
    re.IGNORECASE,
)


def announces_change(text: str) -> bool:
    """Does a statement say, in any words, that something changed ("moved to", "switched", "now", "a new job")?
    "New" opening a name ("New Year's Eve", "New York") says nothing changed."""
    return _CHANGES.search(_OTHER_NEW.sub("", statement_body(text))) is not None


_OPENERS = frozenset(
    """a an the i my our we you your he she it they this that these those there here what when where who why how
    got get sold switched closed started moved turns since new update actually so then now today yesterday
    finally also just after before because but and or if as at in on for from with by to of no yes not never
    always please thanks ok okay well oh hmm sorry good great sure let lets don't can could would should will
    has have had is are was were be been being do does did""".split()
)


def leading_names(text: str) -> frozenset[str]:
    """Capitalised words opening a sentence that are not common openers: names, as in "Tom took over"."""
    body = statement_body(text)
    out = set()
    for m in re.finditer(r"(?:^|(?<=[.!?;:]\s))([A-Z][a-z]+)\b", body):
        word = m.group(1).lower()
        if word not in _OPENERS and word not in NOT_NAMES:
            out.add(word)
    return frozenset(out)


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine|we|we're|our|us)\b", re.IGNORECASE)


def first_person(text: str) -> bool:
    """Does a statement speak in the first person ("I moved", "my bank")?"""
    return _FIRST_PERSON.search(statement_body(text).replace("\u2019", "'")) is not None


_AFTER_PREPOSITION = re.compile(
    r"\b(?:with|to|at|from|into|onto|via|through)\s+(?:(?:a|an|the|my|our|his|her|their|st\.?|saint)\s+)*$",
    re.IGNORECASE,
)


_OWN_TEAM = re.compile(r"\b(?:my|our) team\b", re.IGNORECASE)
_SAINT = re.compile(r"\b(?:St|St\.|Saint)\s+$")
# "Name's" as part of a longer name ("Queen's Road", "Jo's Studio", "Apple's 15 Pro"), or opening a sentence with an
# "'s" that is "is with": who provides a service ("Broadband's with Virgin", "Insurance's with Aviva")
_NAME_GOES_ON = re.compile(r"\s+[A-Z0-9]")
_IS_WITH = re.compile(r"\s+with\b")


def people(text: str) -> frozenset[str]:
    """Whom a statement is about besides its speaker: relations ("my sister") and possessive names ("Sarah's"),
    unless they follow a preposition, where they are where or with whom the speaker does something ("switched to a
    clinic", "swapped plots with a neighbour"), not of whom the statement speaks; a possessive stays somebody's
    ("moved to Marco's", "at my parents' place"), and so does a name's "'s" that is "is" or "has" ("Sarah's moved
    to Leeds" is news of Sarah). A name's "'s" that is part of a longer name ("St Mary's", "Queen's Road", "Jo's
    Studio", "Apple's 15 Pro") names nobody, nor does a sentence opening on "X's with" (who provides a service:
    "Broadband's with Virgin Media"). One relation in other words is one person
    ("kids" / "children": "kid"), and the user's own team ("our team", "my team") is the user's. Relations named in
    other languages count too, by their English word (see ``relations``: "meine Schwester" is "sister")."""
    body = _OWN_TEAM.sub("", statement_body(text))
    found = (
        m.group(0).lower()
        for m in _PEOPLE.finditer(body)
        if (
            m.group(0).endswith("'s")
            and not (
                m.group(0)[0].isupper()
                and (
                    _SAINT.search(body[: m.start()])
                    or _NAME_GOES_ON.match(body, m.end())
                    or (_IS_WITH.match(body, m.end()) and starts_sentence(body, m.start()))
                )
            )
        )
        or (
            not m.group(0).endswith("'s")
            and (
                body[m.end() : m.end() + 1] in ("'", "\u2019")  # "at my parents' place": whose place it is
                or not _AFTER_PREPOSITION.search(body[: m.start()])
            )
        )
    )
    named = (w[:-2] if w.endswith("'s") else w.removesuffix("s") for w in found)
    return frozenset(_SAME_PERSON.get(w, w) for w in named) | relations_named(body)


# one relation said in other words ("the kids" / "our children") is one person, named once
_SAME_PERSON = {
    "children": "kid",
    "child": "kid",
    "mum": "mother",
    "mom": "mother",
    "dad": "father",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "gran": "grandmother",
    "granny": "grandmother",
    "grandad": "grandfather",
    "granddad": "grandfather",
    "coworker": "colleague",
    "co-worker": "colleague",
    "flatmate": "roommate",
}
