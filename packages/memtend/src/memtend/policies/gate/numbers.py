"""Numbers: payment cards (Luhn), IBANs (mod-97), US social security numbers and other national ids."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator

from memtend.policies.gate.common import HAS_DIGITS, Hit
from memtend.policies.gate.prefilter import LongText, matches_at

__all__ = ["card_hits", "iban_hits", "iban_valid", "luhn_valid", "national_id_hits"]


# ---------------------------------------------------------------------------------------------------------
# Payment cards: digit runs of 13-19 digits, a known issuer prefix and length, and a valid Luhn check digit.
# Groups may be split by any separator people use (spaces or tabs, a line break, a dash of any kind, a dot, a
# slash, a comma, an underscore, a bar, a colon, a tilde, or a mix); detectors read the normal form, so no-break
# spaces are spaces, zero-width characters are gone and digits are ASCII. Only a single space or hyphen keeps
# any grouping; other separators need the groups a card is printed with (fours, or 4-6-5 / 4-6-4), so dates,
# IP addresses, prices and phone numbers written with dots or commas are not read as one number.

_CARD_SEP = r"(?:[ \t]{1,3}(?:(?:\r?\n|[\-‐‑‒–—−./,_|;:~])[ \t]{0,3})?|(?:\r?\n|[\-‐‑‒–—−./,_|;:~])[ \t]{0,3})"
_CARD_RUN = re.compile(r"(?<![0-9A-Za-z])(?<![0-9][ \-])[0-9]+(?:" + _CARD_SEP + r"[0-9]+)*(?![0-9A-Za-z])")
_CARD_GROUP = re.compile(r"[0-9]+")
_PLAIN_SEPS = frozenset((" ", "-"))
_CARD_GROUPINGS = frozenset(((4, 6, 5), (4, 6, 4), (4, 4, 5), (4, 4, 4, 4, 3), (6, 13)))
# Words that make a number a card even beside an id label; weaker ones ("pay", "charge") do not.
_STRONG_CARD_WORDS = re.compile(
    r"\b(?:card|visa|master ?card|amex|american express|discover|maestro|jcb|diners|cvv|cvc|exp(?:iry|ires)?)\b",
    re.IGNORECASE,
)
# An id that is not a card (or not a national id) when it names the number just before it: "Order 4111...",
# "employee number for Dana is 4111...", "SKU: 5265-...", "Part no. 123-45-6789".
_ID_LABEL = re.compile(
    r"\b(?:order|invoice|inv|tracking|shipment|parcel|waybill|ref(?:erence)?|ticket|case|isbn|ean|upc|gtin|asin"
    r"|serial|imei|phone|tel|fax|mobile|id|sku|part|item|article|product|model|catalog(?:ue)?|batch|lot"
    r"|transaction|confirmation|booking|employee|staff|member(?:ship)?|customer|client|badge|payroll|po|p/n|pn"
    r"|stock|policy|claim|patient|student|loyalty|container|asset|tag|voucher|receipt|reservation|registration"
    r"|record|file|docket|sample|shipping|delivery|vin|flight|route)\b"
    r"[ \t]*(?:no\.?|num(?:ber)?|#|id|code)?(?:[ \t]+(?:for|of)[ \t]+[^\s:=]{1,30}(?:[ \t]+[^\s:=]{1,30})?)?"
    r"[ \t]*(?:is|was|:|=|#)?[ \t]*[:#]?[ \t]*$",
    re.IGNORECASE,
)


def id_label_before(text: str, start: int) -> bool:
    """The number at ``start`` is named by an id label just before it (order, SKU, part, employee, ...)."""
    return _ID_LABEL.search(text, max(0, start - 48), start) is not None


def _found(
    pattern: re.Pattern[str], text: str, long: LongText | None, starts: Callable[[LongText], list[int]]
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, or in a long text the matches at the places ``starts`` gives."""
    return pattern.finditer(text) if long is None else matches_at(pattern, text, starts(long))


def _card_shaped(groups: list[str]) -> bool:
    """The groups are printed as a card is: one block, fours (the last may be shorter), or a scheme's shape."""
    sizes = tuple(len(g) for g in groups)
    if len(sizes) == 1 or sizes in _CARD_GROUPINGS:
        return True
    return all(n == 4 for n in sizes[:-1]) and 1 <= sizes[-1] <= 4


def luhn_valid(digits: str) -> bool:
    """True if the string of ASCII digits carries a valid Luhn check digit."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_issuer_ok(d: str) -> bool:
    """The number starts with a payment-card issuer prefix and has that scheme's length."""
    n = len(d)
    if d[0] == "4":  # Visa
        return n in (13, 16, 19)
    p2, p3, p4 = int(d[:2]), int(d[:3]), int(d[:4])
    if p2 in (34, 37):  # American Express
        return n == 15
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:  # Mastercard
        return n == 16
    if 2200 <= p4 <= 2204 or 3528 <= p4 <= 3589 or d[0] == "6":  # Mir, JCB, Discover/UnionPay/Maestro/RuPay
        return 16 <= n <= 19
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):  # Diners Club
        return 14 <= n <= 19
    if p2 in (50, 56, 57, 58):  # Maestro
        return 13 <= n <= 19
    return False


def _is_card(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and _card_issuer_ok(digits) and luhn_valid(digits)


def _card_context_near(text: str, start: int, end: int) -> bool:
    """A strong card word just before the number or just after it ("card 4111...", "4111... exp 09/28")."""
    return _STRONG_CARD_WORDS.search(text, max(0, start - 64), min(len(text), end + 24)) is not None


# Groups split by commas, semicolons, bars, colons, tildes, tabs or line breaks are also how lists and table rows
# of short numbers are written ("Rooms 4600, 1041, 7942, 4276"; a column of codes): read as a card only with a
# word about cards or paying near, in any of a few languages.
_LIST_SEPARATORS = frozenset(",;|:~\t\n")
_CARD_OR_PAYMENT_WORDS = re.compile(
    r"(?i:\b(?:card|visa|master ?card|amex|american express|discover|maestro|jcb|diners|cvv|cvc|exp(?:iry|ires)?"
    r"|cc|mc|pay(?:ment|ing|s)?|paid|charged?|credit|debit|billing|bill|checkout|purchase|karte|kreditkarte|carte"
    r"|tarjeta|cart[ãa]o|kaart|karta|kort|kortet)\b|карт|カード|卡)"
)


def _payment_context_near(text: str, start: int, end: int) -> bool:
    return _CARD_OR_PAYMENT_WORDS.search(text, max(0, start - 64), min(len(text), end + 24)) is not None


# Most characters a card's groups may be apart (``_CARD_SEP`` at its longest: spaces, a line break, spaces).
_CARD_MAX_GAP = 8


def _card_runs(text: str, long: LongText | None) -> Iterator[re.Match[str]]:
    """The runs ``_CARD_RUN`` finds, or of a long text those that can hold 13 digits: a run's digits are never
    more than ``_CARD_MAX_GAP`` apart, so it lies in one stretch of digits that close and holds as many."""
    if long is None:
        yield from _CARD_RUN.finditer(text)
        return
    for first, last in long.digit_clusters(13, _CARD_MAX_GAP):
        # The run ends at ``last`` at most; ``last + 1`` is kept for the pattern's look-ahead.
        yield from _CARD_RUN.finditer(text, first, min(len(text), last + 2))


def card_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    if not HAS_DIGITS.search(text):
        return
    for run in _card_runs(text, long):
        if run.end() - run.start() < 13:
            continue  # fewer than 13 characters hold fewer than 13 digits: no card (most runs are short numbers)
        groups = [(m.start() + run.start(), m.end() + run.start()) for m in _CARD_GROUP.finditer(run.group())]
        total = sum(e - s for s, e in groups)
        if total < 13:
            continue
        seps = {text[a:b] for (_, a), (b, _) in itertools.pairwise(groups)}
        plain = seps <= _PLAIN_SEPS
        spans: list[tuple[int, int]] = []
        if total <= 19:
            values = [text[s:e] for s, e in groups]
            if (plain or _card_shaped(values)) and _is_card("".join(values)):
                spans.append((run.start(), run.end()))
        if not spans and len(groups) > 1:
            # A card inside a longer run ("call 415 555 0132 4111 1111 1111 1111"): windows of whole groups
            # of at least 3 digits, as cards are written.
            for i in range(len(groups)):
                values = []
                digits = 0
                for j in range(i, len(groups)):
                    s, e = groups[j]
                    if e - s < 3:
                        break
                    values.append(text[s:e])
                    digits += e - s
                    if digits > 19:
                        break
                    if digits >= 13 and (plain or _card_shaped(values)) and _is_card("".join(values)):
                        spans.append((groups[i][0], e))
        if not spans:
            continue
        listed = not plain and any(c in _LIST_SEPARATORS for sep in seps for c in sep)
        if listed and not _payment_context_near(text, run.start(), run.end()):
            continue  # a list or a table row of short numbers
        if id_label_before(text, run.start()) and not _card_context_near(text, run.start(), run.end()):
            continue  # "Invoice 5499 ...", "Employee number 4304...": an id, not a card
        for s, e in spans:
            yield s, e, "card"


# ---------------------------------------------------------------------------------------------------------
# IBAN: country code, two check digits, the country's length, and the ISO 7064 mod-97 check.

_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25,
    "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
# Groups split by a space (any space, in the normal form), a dash or a dot.
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}(?:[ \-.]?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])")
_IBAN_SEPARATORS = " -."


def iban_valid(iban: str) -> bool:
    """True for an IBAN (spaces allowed) of its country's length whose mod-97 check gives 1."""
    compact = iban.replace(" ", "").upper()
    if not compact.isascii() or not compact.isalnum() or _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    if not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


def iban_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    if not HAS_DIGITS.search(text):
        return
    # An IBAN starts with two letters and two digits.
    for match in _found(_IBAN, text, long, lambda lt: lt.shapes(b"a00", b"A00", shift=-1)):
        candidate = match.group()
        expected = _IBAN_LENGTHS.get(candidate[:2].upper())
        if expected is None:
            continue
        # The run may carry a trailing word ("GB27 ULDM ... 81 THX"): cut it at the country's length.
        count = 0
        for i, ch in enumerate(candidate):
            if ch not in _IBAN_SEPARATORS:
                count += 1
            if count == expected:
                cut = "".join(c for c in candidate[: i + 1] if c not in _IBAN_SEPARATORS)
                at_boundary = i + 1 == len(candidate) or candidate[i + 1] in _IBAN_SEPARATORS
                if at_boundary and iban_valid(cut):
                    yield match.start(), match.start() + i + 1, "iban"
                break


# ---------------------------------------------------------------------------------------------------------
# National ids: US SSN (dashed anywhere, undashed after the words), UK National Insurance numbers, and
# numbers announced as passport / licence / national id numbers.

_SSN_DASHED = re.compile(
    r"(?<![0-9A-Za-z\-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![0-9A-Za-z]|-[0-9])"
)
_SSN_CONTEXT = re.compile(
    r"(?i:\b(?:ssn|ss#|social[ \t]+security(?:[ \t]+(?:number|no\.?|#))?))[^0-9\n]{0,15}?"
    r"(?<![0-9])((?!000|666|9[0-9]{2})[0-9]{3}[ .]?(?!00)[0-9]{2}[ .]?(?!0000)[0-9]{4})(?![0-9])"
)
_UK_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2}"
    r" ?[A-D](?![A-Za-z0-9])"
)
_ID_CONTEXT = re.compile(
    r"(?i:\b(?:passport|driver'?s?[ \t]+licen[cs]e|driving[ \t]+licen[cs]e|national[ \t]+(?:id|identity|insurance)"
    r"|social[ \t]+insurance|tax[ \t]+(?:id|identification)|aadhaar|personal[ \t]+id(?:entity)?|id[ \t]+card))"
    r"(?i:[ \t]+(?:number|no\.?|#|card))?[ \t]*(?i:is|:|=|#)?[ \t]*"
    r"([0-9]{4}[ \-]?[0-9]{4}[ \-]?[0-9]{4}|[A-Za-z]{0,3}[0-9][A-Za-z0-9]{4,17})(?![A-Za-z0-9])"
)


_ID_WORDS_NEAR = re.compile(r"(?i:\b(?:ssn|ss#|social[ \t]+security|national[ \t]+insurance|nino|nin)\b)")
_ID_WORDS = ("passport", "licen", "national", "insurance", "tax", "aadhaar", "personal", "id card")


def national_id_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    if not HAS_DIGITS.search(text):
        return
    # Shaped like an SSN or a NINO but labelled as a part, order or SKU number: not an id. The words "SSN" or
    # "social security" anywhere say otherwise (and the context rule below finds those numbers anyway).
    has = long.has if long is not None else lower.__contains__
    id_words = (has("ss") or has("social") or has("insurance") or has("nino")) and (
        next(_found(_ID_WORDS_NEAR, text, long, lambda lt: lt.words("ssn", "ss#", "social", "national", "nin")), None)
        is not None
    )
    if "-" in text:
        for match in _found(_SSN_DASHED, text, long, lambda lt: lt.shapes(b"000-00-0000")):
            if id_words or not id_label_before(text, match.start()):
                yield match.start(), match.end(), "ssn"
    if id_words:
        for match in _found(_SSN_CONTEXT, text, long, lambda lt: lt.words("ssn", "ss#", "social")):
            yield match.start(1), match.end(1), "ssn"
    # A NINO starts with two capitals and two digits, maybe with a space between.
    for match in _found(_UK_NINO, text, long, lambda lt: lt.shapes(b"A00", b"A 00", shift=-1)):
        if id_words or not id_label_before(text, match.start()):
            yield match.start(), match.end(), "national_id"
    if any(has(word) for word in _ID_WORDS):
        context = ("passport", "driv", "national", "social", "tax", "aadhaar", "personal", "id")
        for match in _found(_ID_CONTEXT, text, long, lambda lt: lt.words(*context)):
            value = match.group(1)
            if sum(c.isdigit() for c in value) >= 4:
                yield match.start(1), match.end(1), "national_id"
