"""What a statement is about, apart from the value it states: the subject signal for changes said in other words.

"I live in Paris." and "I moved to Berlin last month." share no word, and their plain embeddings are only
somewhat close: the city names pull them apart. With the values masked ("I live in <place>." / "I moved to
<place> last month.") what is left is the subject, and two statements about one subject come out close in
meaning whatever values they hold. :func:`masked_subject` makes that masked form; the caller encodes it (once
per record, lazily) and compares.

Masked, each replaced by one placeholder word (a run of them collapses to one):

- numbers, with what is glued to them (``10mg``, ``7am``, ``48k``, ``555-2020``, ``10:15``, ``3rd``) and spelled
  numbers ("twelve thousand");
- e-mail addresses, handles (``@dana``, ``#help-desk``) and web addresses;
- days, months and times of day ("Tuesday", "mornings", "June");
- names: capitalised words inside a sentence (not "I"), and at a sentence's start when followed by another
  capitalised word or shaped like a brand (``ThinkPad``, ``EDF``, ``iPhone``);
- a one-word value after "is/are/am" closing its clause ("I'm vegetarian." -> "I'm something.").

Pure: the standard library only.
"""

from __future__ import annotations

import re

from memtend.policies.text_features import starts_sentence, statement_body, without_speaker

from memtend_conflicts.cues import cues_of
from memtend_conflicts.reading import reads_english
from memtend_conflicts.relations import relations_named
from memtend_conflicts.words import announces_change

__all__ = [
    "PLACEHOLDER",
    "about_another_thing",
    "adds_to",
    "masked_subject",
    "not_yet_or_long_ago",
    "only_begins",
    "reports_an_act",
    "speaks_of_the_user",
    "tells_an_occasion",
    "value_kinds",
]

PLACEHOLDER = "something"

_ADDRESSES = re.compile(r"\S+@\S+\.\w+|https?://\S+|www\.\S+|(?<![\w@#])[@#][\w.-]+")
_NUMBER_WORDS = (
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fifteen|twenty|thirty|forty"
    r"|fifty|hundred|thousand|million|half"
)
_NUMBERS = re.compile(
    rf"(?<![\w])[£$€]?\d(?:[\d.,:/'-]*\d)?\w*|\b(?:{_NUMBER_WORDS})(?:[\s-]+(?:{_NUMBER_WORDS}))*\b",
    re.IGNORECASE,
)
_TIMES = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend|january|february|march"
    r"|april|june|july|august|september|october|november|december|morning|afternoon|evening|night|noon"
    r"|midnight)s?\b|\bMay\b",
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"\b[A-Z][\w'&.+-]*|\b[a-z]+[A-Z][\w'+-]*")
_BRAND = re.compile(r"^(?:[A-Z]{2,}[\w+]*|[a-z]+[A-Z]\w*|[A-Z]\w*[A-Z]\w*|\w*\d\w*)$")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "OK", "TV"})
_COPULA_VALUE = re.compile(r"\b(?:is|are|am|'m|'re)\s+([A-Za-z][\w-]*)(?=\s*(?:[.!?;,]|$))")
_TOKEN = "\x00"  # stands for a masked value until runs are collapsed
_SENTENCE_OR_MASK = frozenset(".!?:;\"'([" + _TOKEN)  # a sentence opens after these, or after a masked value


def masked_subject(text: str) -> str:
    """The statement with its values masked: what it is about, not what it says the value is.

    >>> masked_subject("I moved to Berlin last month.")
    'I moved to something last month.'
    """
    body = statement_body(text)
    body = _ADDRESSES.sub(_TOKEN, body)
    body = _NUMBERS.sub(_TOKEN, body)
    body = _TIMES.sub(_TOKEN, body)
    body = _mask_names(body)
    body = _COPULA_VALUE.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + _TOKEN, body)
    collapsed = re.sub(rf"{_TOKEN}(?:[\s&,'-]*(?:and\s+|of\s+)?{_TOKEN})*", _TOKEN, body)
    return collapsed.replace(_TOKEN, PLACEHOLDER)


def value_kinds(text: str) -> frozenset[str]:
    """What kinds of value a statement holds, of those :func:`masked_subject` masks: ``"address"`` (e-mail, handle,
    web address), ``"number"``, ``"time"`` (a day, month or time of day) and ``"name"`` (a capitalised name or
    brand). A newer statement that replaces an older one in other words mostly holds a value of a kind the older
    holds ("LastPass" / "Bitwarden", "7:40" / "8:10", "Tuesdays" / "Fridays").

    >>> sorted(value_kinds("My shift starts at 7am on Mondays."))
    ['number', 'time']
    """
    body = statement_body(text)
    kinds = set()
    for kind, pattern in (("address", _ADDRESSES), ("number", _NUMBERS), ("time", _TIMES)):
        if pattern.search(body):
            kinds.add(kind)
            body = pattern.sub(_TOKEN, body)
    if _mask_names(body).count(_TOKEN) > body.count(_TOKEN):
        kinds.add("name")
    return frozenset(kinds)


def _mask_names(text: str) -> str:
    out: list[str] = []
    last = 0
    matches = list(_CAPITALISED.finditer(text))
    for index, m in enumerate(matches):
        word = m.group(0).rstrip(".")
        if word in _NOT_NAMES:
            continue
        if starts_sentence(text, m.start(), _SENTENCE_OR_MASK):
            following = matches[index + 1] if index + 1 < len(matches) else None
            joined = following is not None and text[m.end() : following.start()].strip() == ""
            if not (_BRAND.match(word) or joined):
                continue
        out.append(text[last : m.start()])
        out.append(_TOKEN)
        last = m.start() + len(word)
    out.append(text[last:])
    return "".join(out)


# -- is the newer statement a current change of the user's own thing? ------------------------------------------

_NOT_YET = re.compile(
    r"\b(?:might|maybe|perhaps|planning|plan to|thinking (?:of|about)|considering|hoping|hope to|would (?:like|love)"
    r"|'d (?:like|love)|wants? to|someday|some day|one day|eventually|sometime)\b"
    r"|(?<!\bin )(?<!\bof )\bmay\b(?!\s+\d)"
    r"|\bif\b[^.;!?]*\b(?:would|'d|could)(?:n't)?\b|\bif\b[^.;!?]*\bever\b"
    r"|\b(?:would|'d|could) (?:consider|switch|go|move|change|try)\b",
    re.IGNORECASE,
)
_LONG_AGO = re.compile(
    r"\b(?:back in|(?:\w+ )?(?:years|summers|winters|decades) ago|when (?:i|we) (?:was|were)|used to"
    r"|as a (?:kid|child|student|teenager)"
    r"|since (?:i|we) (?:was|were)|since (?:uni|university|college|school|childhood|birth|forever|ever|always))\b",
    re.IGNORECASE,
)
_OPENS_WITH_DETERMINER = re.compile(r"^\s*(?:the|a|an)\s", re.IGNORECASE)
_BACK_REFERENCE = re.compile(
    r"\b(?:i|i'm|i've|i'd|me|my|mine|we|we're|we've|our|us|it|that|them|they|they've|she|her|he|him|his)\b",
    re.IGNORECASE,
)


def not_yet_or_long_ago(text: str) -> bool:
    """Does the statement speak of a plan, a wish or a condition ("might", "thinking of", "someday", "if they
    offered fibre, I'd switch") or of a time long past ("back in 2016", "two summers ago", "when I was a student"),
    or of a state held since long ago ("a fan since I was six", "with Barclays since uni": nothing changed lately)?
    None replaces how things are now."""
    body = without_speaker(text).replace("\u2019", "'")
    if _NOT_YET.search(body) is not None or _LONG_AGO.search(body) is not None:
        return True
    return bool(cues_of(body) & {"plan", "long_ago"})  # said in another language (see cues)


_OPENS_WITH_ARTICLE = re.compile(
    r"^\W*(?:der|die|das|den|dem|des|ein|eine|einen|het|de|een|le|la|les|l'|un|une|el|los|las|il|lo|gli|uno|una|o|a|os"
    r"|as|en|ett|det)(?![\w-])",
    re.IGNORECASE,
)
_HEARSAY = re.compile(
    r"\b(?:according to|reportedly|(?:in|on) the news|(?:i|we) (?:read|heard|saw) (?:that|somewhere|online))\b",
    re.IGNORECASE,
)


def about_another_thing(text: str) -> bool:
    """Does the statement open on a thing of its own ("The canteen now opens at 10pm", "A new café opened") and
    never speak of the user or refer back ("I", "my", "we", "it", "them", "her"), or pass on what others report
    ("Rates for new fixes are around 4.4% according to the news")? Then a change it announces is that thing's, not a
    change of what an older statement of the user's said."""
    body = without_speaker(text).replace("\u2019", "'")
    if _HEARSAY.search(body):
        return True
    if _OPENS_WITH_DETERMINER.match(body) is not None and _BACK_REFERENCE.search(body) is None:
        return True
    # in another language: opening on an article ("Il numero dell'ufficio è ...", "Die Kantine öffnet um 10"), with
    # no word of the user and no change cue (a subject left out may be the user's: "El gimnasio lo dejé, ahora nado")
    return (
        _OPENS_WITH_ARTICLE.match(body) is not None
        and not reads_english(body)
        and not cues_of(body) & {"first_person", "change"}
    )


_ACTS = re.compile(
    r"\b(?:re-?booked|re-?assigned|re-?registered|registered|shifted|traded|dropped|cancell?ed|canceled|signed up"
    r"|took up|taken up|engaged|married|divorced|bought|sold|accepted|handed in|renamed|reset|installed|retired"
    r"|graduated|promoted|put me on|ported|finished|gave up|given up|signed|ditched|swapped|got rid of"
    r"|gave (?:[\w-]+ ){0,2}away"
    # a move from one state into another ("consolidated the pots into a SIPP", "remortgaged onto a tracker", "went
    # back to paper books"; not a visit: "popped into the shop")
    r"|\w+ed (?:[\w'-]+ ){1,3}(?:into|onto|over to|back to)|\w+ed (?:onto|over to|back to)|went (?:back|over) to"
    # the end of the older state ("the e-reader is gone", "after the old boy passed away")
    r"|passed away|died|(?:is|are|'s) gone|went to live with|rehomed)\b",
    re.IGNORECASE,
)


_BEGINS = re.compile(
    r"\b(?:started|starting|began|begun|opened|joined|enrolled|signed up|took up|taken up|registered|adopted)\b",
    re.IGNORECASE,
)


def only_begins(text: str) -> bool:
    """Is the statement's only change cue the beginning of something ("Opened an ISA with Vanguard", "Joined the
    parkrun rota", "Signed up for a marathon"), with no word that ends or replaces what held ("quit", "switched",
    "instead", "now", "a new job")? A beginning is as often an addition beside what holds as its change."""
    body = without_speaker(text)
    if _BEGINS.search(body) is None:
        return False
    rest = _BEGINS.sub(" ", body)
    return not (announces_change(rest) or reports_an_act(rest))


def reports_an_act(text: str) -> bool:
    """Does the statement report an act that ends or replaces a state ("rebooked", "traded it in", "signed up",
    "dropped it", "got engaged")? Beside the change cues of ``words.announces_change``, a cue that a newer
    statement about the same subject replaces an older one."""
    body = without_speaker(text)
    return _ACTS.search(body) is not None or "change" in cues_of(body)  # or said in another language


_PAST_OPENING = re.compile(
    r"^\W*(?:(?:i|we|they|he|she|my \w+|our \w+)\s+)?(?:\w+ed|went|got|took|ran|made|bought|spent|had|saw|did|came"
    r"|gave|drove|test-drove|flew|ate|met|set up|caught|wore|won|lost|read|heard|found|sent|brought|kept|told)\b",
    re.IGNORECASE,
)
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_OCCASION = re.compile(
    r"\b(?:yesterday|last (?:night|week|weekend|month|year|summer|winter|spring|autumn|time)|this morning|tonight"
    r"|next (?:week|weekend|month|year|summer|time)|on (?:holiday|vacation|a trip)|for the weekend|not sure"
    r"|(?:in|during) (?:19|20)\d\d|(?:my|our|the) (?:old|former|previous)"
    rf"|on (?:{_DAYS})(?!s|\s+(?:morning|afternoon|evening|night)s)|this (?:{_DAYS}|week|weekend))\b"
    r"|\bonce\b(?!\s+(?:a|an|every|per|each)\b)"
    r"|\b(?:was|were)\b",
    re.IGNORECASE,
)


def tells_an_occasion(text: str) -> bool:
    """Does the statement tell of one occasion rather than how things stand: it opens on a verb in the past ("Cooked
    a roast for my in-laws", "We adopted a kitten") or names one time ("last night", "on Sunday", "in 2018", "once",
    "next month", "on holiday", "our old landlord") or says how things were ("At camp the bedtime was ten")? Said
    without a change cue, such a statement does not replace an older one; said in the present ("Credentials live in
    Bitwarden") it may."""
    body = without_speaker(text).replace("\u2019", "'")
    if _PAST_OPENING.search(body) is not None or _OCCASION.search(body) is not None:
        return True
    return "occasion" in cues_of(body)  # said in another language (see cues)


_FIRST_PERSON_OR_BACK = re.compile(
    r"\b(?:i|i'm|i've|i'd|me|my|mine|we|we're|we've|our|us|it|that|them|they|they've|she|her|he|him|his)\b",
    re.IGNORECASE,
)
_ACRONYM_IT = re.compile(r"\bIT\b")
_VERB_OPENING = re.compile(
    r"^\W*(?:(?:just|recently|finally|now)\s+)?(?:\w+ed|went|got|took|made|bought|spent|gave|broke|quit|left|sold"
    r"|switched|moved|swapped|joined)\b"
    r"|^\W*(?:(?:just|now)\s+)?[a-z][\w-]*ing\s+(?:to|by|from|at|in|on|with|for|into|a|an|the|my|our|every|each|more|less)\b",
    re.IGNORECASE,
)


def speaks_of_the_user(text: str) -> bool:
    """Does the statement speak of the user or of what was said before: in the first person, referring back ("it",
    "that", "her"), or opening on a verb with no subject, as notes do ("Relocated to Montreal", "Broke up")? "Chess
    club is hosted by Jonas" and "Marketing shifted their review" speak of others, and so does "IT rolled out new
    badges" (the department, not "it"). A note may open on what the user is doing ("Reporting to Daniel since the
    reorganisation", "Commuting by bicycle")."""
    body = _ACRONYM_IT.sub("X", without_speaker(text).replace("\u2019", "'"))
    if _FIRST_PERSON_OR_BACK.search(body) is not None or _VERB_OPENING.match(body) is not None:
        return True
    cues = cues_of(body)  # in another language (see cues)
    if "first_person" in cues:
        return True
    # many languages leave the subject out ("Ahora trabajo en una escuela", "Teraz chodzę do dr Kowalskiej"): not
    # English, or a change said in another language, and nobody else named
    return not relations_named(body) and (not reads_english(body) or "change" in cues)


_ADDS = re.compile(
    r"\b(?:as well|also|another|a second|additionally|in addition|besides|added|on top of|as a treat"
    r"|(?:just|only) for\b(?! now))\b|\btoo\s*(?:[.!,;)]|$)",
    re.IGNORECASE,
)


def adds_to(text: str) -> bool:
    """Does the statement add to what holds rather than replace it ("I'm allergic to shellfish as well", "Now I swim
    on Wednesdays too", "We adopted a second cat")? Then it is another value beside the older one, not its change."""
    body = without_speaker(text)
    return _ADDS.search(body) is not None or "adds" in cues_of(body)  # or said in another language
