"""Write gate: refuse secrets and sensitive data, and flag text that tries to steer the agent. Pure: no storage.

Every write passes through :func:`check_write`:

* :func:`find_sensitive` looks for secrets (cloud and SaaS keys and tokens, JWTs, private key blocks,
  passwords given as values, connection strings with a password) and sensitive personal data (payment
  cards that pass Luhn, IBANs that pass mod-97, US social security numbers, a few other national ids).
  The token formats kept by ``detect-secrets`` are used through its plugin classes; what it lacks
  (checksummed numbers, password phrases, newer key formats) is written here.
* :func:`looks_like_injection` flags text that reads like an instruction to the AI agent rather than to a
  person (prompt injection). Flagged text is still stored; text from an external source always waits
  for review.

A :class:`Finding` holds a kind and a span, never the value, so findings and errors can be logged. Kinds:
``card iban ssn national_id password pin connection_string private_key jwt secret aws_access_key aws_secret_key
openai_key anthropic_key github_token github_pat gitlab_token slack_token stripe_key google_api_key google_oauth
sendgrid_key pypi_token npm_token huggingface_token discord_token telegram_token mailchimp_key azure_storage_key
square_oauth twilio_key artifactory_token``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from re import Pattern

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from memtend.errors import InvalidInputError, SensitiveDataError, UntrustedContentError
from memtend.records import Source, Status

__all__ = [
    "Finding",
    "GateDecision",
    "check_rule",
    "check_write",
    "find_sensitive",
    "iban_valid",
    "looks_like_injection",
    "luhn_valid",
    "redact",
]


@dataclass(frozen=True)
class Finding:
    """One sensitive value: its kind and where it is (``text[start:end]``). The value itself is not kept."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided about one write."""

    text: str  # the text to store: the input, or the input with sensitive values masked
    status: Status  # ACTIVE, or PENDING_REVIEW for external text
    flagged: bool  # the text reads like an instruction to the agent (prompt injection)
    redacted_kinds: tuple[str, ...]  # kinds masked in ``text``, sorted; empty if nothing was masked


# ---------------------------------------------------------------------------------------------------------
# Redaction markers. Text already redacted holds ``[REDACTED:<kind>]``; before scanning, markers are
# replaced by NUL characters of the same length, which no detector accepts inside a value and which act as
# a hard boundary. So a marker is never mistaken for (part of) a value and ``redact`` reaches a fixpoint.

_MARKER_PREFIX = "[REDACTED:"
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_OPAQUE = "\x00"


def _mask_markers(text: str) -> str:
    if _MARKER_PREFIX not in text:
        return text
    return _MARKER.sub(lambda m: _OPAQUE * (m.end() - m.start()), text)


# A hit from one detector: (start, end, kind). Detectors run on the masked text.
_Hit = tuple[int, int, str]

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-]*")
_JWT_CHARS = re.compile(r"[A-Za-z0-9_\-.=+/]*")


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(value: str, *, min_len: int = 16, min_entropy: float = 3.0) -> bool:
    """A machine-made token: long, mixes character classes, high Shannon entropy. Words and ids do not."""
    if len(value) < min_len:
        return False
    has_lower = any("a" <= c <= "z" for c in value)
    has_upper = any("A" <= c <= "Z" for c in value)
    has_digit = any("0" <= c <= "9" for c in value)
    if not has_digit or has_lower + has_upper + has_digit < 2:
        return False
    return _entropy(value) >= min_entropy


# ---------------------------------------------------------------------------------------------------------
# Token formats. Where detect-secrets keeps a format, its plugin's compiled regexes are used.


@dataclass(frozen=True)
class _TokenRule:
    kind: str
    pattern: Pattern[str]
    group: int = 0
    left_boundary: bool = True  # the character before must not be a letter or digit
    extend: Pattern[str] | None = None  # grow the span over trailing token characters (whole value masked)
    validate: Callable[[str], bool] | None = None
    needles: tuple[str, ...] = ()  # skip the regex unless one of these (lower case) occurs in the text


def _plugin_patterns(plugin_class: type, *indexes: int) -> list[Pattern[str]]:
    plugin = plugin_class()  # instantiated once, at import
    patterns = list(plugin.denylist)
    return [patterns[i] for i in indexes] if indexes else patterns


def _jwt_header_ok(token: str) -> bool:
    """A JWT's first segment is base64url JSON naming an algorithm or a type."""
    header = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
        obj = json.loads(decoded.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return isinstance(obj, dict) and bool({"alg", "typ", "enc", "kid"} & obj.keys())


def _random_tail(prefix_len: int, min_len: int = 16) -> Callable[[str], bool]:
    return lambda value: _looks_random(value[prefix_len:], min_len=min_len)


def _build_token_rules() -> list[_TokenRule]:
    rules: list[_TokenRule] = []

    def add(kind: str, patterns: list[Pattern[str]], **options: object) -> None:
        for pattern in patterns:
            if options.get("left_boundary", True):
                # Anchor at a token start: besides the boundary itself, this keeps a run like "eyJeyJeyJ..."
                # from being rescanned from every position (quadratic time).
                pattern = re.compile(r"(?<![A-Za-z0-9])(?:" + pattern.pattern + ")", pattern.flags)
            rules.append(_TokenRule(kind, pattern, **options))  # type: ignore[arg-type]

    add(
        "aws_access_key",
        _plugin_patterns(AWSKeyDetector, 0),
        extend=_TOKEN_CHARS,
        validate=lambda v: len(v) == 20,
        needles=("a3t", "abia", "acca", "akia", "asia"),
    )
    add("aws_secret_key", _plugin_patterns(AWSKeyDetector, 1), group=1, left_boundary=False, needles=("aws",))
    add(
        "aws_secret_key",
        [
            re.compile(
                r"(?i:aws)[\w.-]{0,30}?(?i:secret)[\w.-]{0,30}?[\"']?[ \t]*(?::=|=>|=|:|\s(?i:is)\s)[ \t]*[\"']?"
                r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
            )
        ],
        group=1,
        left_boundary=False,
        needles=("aws",),
    )
    add(
        "anthropic_key",
        [re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,}")],
        extend=_TOKEN_CHARS,
        validate=_random_tail(7),
        needles=("sk-ant-",),
    )
    add("openai_key", _plugin_patterns(OpenAIDetector), extend=_TOKEN_CHARS, needles=("t3blbkfj",))
    add(
        "openai_key",
        [re.compile(r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}")],
        extend=_TOKEN_CHARS,
        validate=lambda v: _looks_random(v.split("-", 2)[-1], min_len=20),
        needles=("sk-",),
    )
    add("github_pat", [re.compile(r"github_pat_[A-Za-z0-9_]{22,}")], extend=_TOKEN_CHARS, needles=("github_pat_",))
    add("github_token", _plugin_patterns(GitHubTokenDetector), extend=_TOKEN_CHARS, needles=("gh",))
    add("gitlab_token", _plugin_patterns(GitLabTokenDetector), extend=_TOKEN_CHARS, needles=("gl", "gr1348941"))
    add("slack_token", _plugin_patterns(SlackDetector), extend=_TOKEN_CHARS, needles=("xox", "hooks.slack"))
    add("slack_token", [re.compile(r"xapp-[0-9]+-[A-Za-z0-9\-]{20,}")], extend=_TOKEN_CHARS, needles=("xapp-",))
    add("stripe_key", _plugin_patterns(StripeDetector), extend=_TOKEN_CHARS, needles=("k_live_",))
    add(
        "stripe_key",
        [re.compile(r"(?:sk|rk|whsec)_(?:test_)?[0-9a-zA-Z]{16,}")],
        extend=_TOKEN_CHARS,
        validate=lambda v: _looks_random(v.rsplit("_", 1)[-1]),
        needles=("k_test_", "whsec_"),
    )
    add("google_api_key", [re.compile(r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")], needles=("aiza",))
    add(
        "google_oauth",
        [re.compile(r"GOCSPX-[0-9A-Za-z_\-]{20,}|ya29\.[0-9A-Za-z_\-]{20,}")],
        extend=_TOKEN_CHARS,
        needles=("gocspx-", "ya29."),
    )
    add(
        "jwt",
        _plugin_patterns(JwtTokenDetector),
        extend=_JWT_CHARS,
        validate=lambda v: v.count(".") >= 2 and _jwt_header_ok(v),
        needles=("eyj",),
    )
    add("sendgrid_key", _plugin_patterns(SendGridDetector), extend=_TOKEN_CHARS, needles=("sg.",))
    add("pypi_token", _plugin_patterns(PypiTokenDetector), extend=_TOKEN_CHARS, needles=("pypi-",))
    add("npm_token", [re.compile(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")], needles=("npm_",))
    add(
        "huggingface_token",
        [re.compile(r"hf_[A-Za-z0-9]{30,}")],
        extend=_TOKEN_CHARS,
        validate=_random_tail(3),
        needles=("hf_",),
    )
    add("discord_token", _plugin_patterns(DiscordBotTokenDetector), extend=_TOKEN_CHARS, needles=(".",))
    add("telegram_token", _plugin_patterns(TelegramBotTokenDetector), extend=_TOKEN_CHARS, needles=(":",))
    add("mailchimp_key", _plugin_patterns(MailchimpDetector), extend=_TOKEN_CHARS, needles=("-us",))
    add("azure_storage_key", _plugin_patterns(AzureStorageKeyDetector), left_boundary=False, needles=("accountkey=",))
    add("square_oauth", _plugin_patterns(SquareOAuthDetector), extend=_TOKEN_CHARS, needles=("sq0csp-",))
    add(
        "twilio_key",
        _plugin_patterns(TwilioKeyDetector),
        extend=_TOKEN_CHARS,
        validate=lambda v: _looks_random(v[2:], min_len=32, min_entropy=3.5),
        needles=("ac", "sk"),
    )
    # Artifactory API tokens (AKC...). Its "AP..." password rule matches ordinary capitalised words; left out.
    add(
        "artifactory_token",
        [re.compile(r"AKC[a-zA-Z0-9]{10,}")],
        extend=_TOKEN_CHARS,
        validate=_random_tail(3, 40),
        needles=("akc",),
    )
    # Connection strings and URLs with a password: detect-secrets' rule, the password is the span.
    add(
        "connection_string",
        _plugin_patterns(BasicAuthDetector),
        group=1,
        left_boundary=False,
        validate=lambda v: not _is_placeholder(v),
        needles=("://",),
    )
    return rules


_PLACEHOLDER_WORDS = frozenset(
    re.findall(
        r"\S+",
        "password passwd pass pwd secret token key apikey api_key changeme placeholder redacted hidden masked "
        "example sample dummy xxx xxxx xxxxx none null nil n/a na tbd tba todo unknown unset empty blank",
    )
)


_VARIABLE = re.compile(r"\$\{.*|\$\(.*|%\(.*|\$[A-Z_][A-Z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%")


def _is_placeholder(value: str) -> bool:
    """A stand-in rather than a value: ``<password>``, ``${DB_PASS}``, ``$DB_PASS``, ``****``, ``your_password``."""
    if not value or value[0] in "<{[" or _VARIABLE.fullmatch(value):
        return True
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or low.startswith(("your_", "your-", "my_", "xxx")):
        return True
    return len(set(value)) == 1 or all(c in "*•●·.-_#xX" for c in value)


_TOKEN_RULES = _build_token_rules()
_NEEDLES = tuple(sorted({needle for rule in _TOKEN_RULES for needle in rule.needles}))


def _token_hits(text: str, lower: str) -> Iterator[_Hit]:
    present = {needle for needle in _NEEDLES if needle in lower}
    for rule in _TOKEN_RULES:
        if rule.needles and present.isdisjoint(rule.needles):
            continue
        covered = -1  # end of the last hit of this rule: later matches inside it add nothing
        for match in rule.pattern.finditer(text):
            start, end = match.span(rule.group)
            if start < 0 or start == end or start < covered:
                continue
            if rule.extend is not None:
                end = rule.extend.match(text, end).end()
                covered = end  # even if invalid: the rest of this token must not be re-extended (quadratic)
            if rule.validate is not None and not rule.validate(text[start:end]):
                continue
            covered = end
            yield start, end, rule.kind


# ---------------------------------------------------------------------------------------------------------
# Private key blocks: from the BEGIN line to the matching END line (or, if cut off, to the end of the text).

_PEM_BEGIN = re.compile(
    r"(?:-{2,5} ?)?BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?"
    + "|"
    + "|".join(p.pattern for p in _plugin_patterns(PrivateKeyDetector))
)
_PEM_END = re.compile(r"END [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?(?: ?-{2,5})?|Private-MAC: *[0-9a-fA-F]*")


def _private_key_hits(text: str, lower: str) -> Iterator[_Hit]:
    if "private" not in lower and "putty" not in lower:
        return
    pos = 0
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            return
        end = _PEM_END.search(text, begin.end())
        stop = end.end() if end is not None else len(text)
        yield begin.start(), stop, "private_key"
        if end is None:
            return
        pos = stop


# ---------------------------------------------------------------------------------------------------------
# Payment cards: digit runs (single spaces or dashes between groups) of 13-19 digits, a known issuer
# prefix and length, and a valid Luhn check digit.

_CARD_RUN = re.compile(r"(?<![0-9A-Za-z])(?<![0-9][ \-])[0-9]+(?:[ \-][0-9]+)*(?![0-9A-Za-z])")
_CARD_GROUP = re.compile(r"[0-9]+")
_CARD_WORDS = re.compile(
    r"\b(?:card|visa|master ?card|amex|american express|discover|maestro|jcb|diners|credit|debit|cc|cvv|cvc"
    r"|exp(?:iry|ires)?|charge|pay(?:ment)?)\b",
    re.IGNORECASE,
)
_NOT_CARD_LABEL = re.compile(
    r"\b(?:order|invoice|inv|tracking|shipment|parcel|ref(?:erence)?|ticket|case|isbn|serial|imei|phone|tel"
    r"|fax|mobile|id|sku|part|batch|lot|transaction|confirmation|booking)\b[ \t]*(?:no\.?|num(?:ber)?|#|id)?"
    r"[ \t]*[:#]?[ \t]*$",
    re.IGNORECASE,
)


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


_HAS_DIGITS = re.compile(r"[0-9]{2}")


def _card_hits(text: str, lower: str) -> Iterator[_Hit]:
    if not _HAS_DIGITS.search(text):
        return
    card_context: bool | None = None
    for run in _CARD_RUN.finditer(text):
        groups = [(m.start() + run.start(), m.end() + run.start()) for m in _CARD_GROUP.finditer(run.group())]
        total = sum(e - s for s, e in groups)
        if total < 13:
            continue
        spans: list[tuple[int, int]] = []
        if total <= 19 and _is_card("".join(text[s:e] for s, e in groups)):
            spans.append((run.start(), run.end()))
        elif len(groups) > 1:
            # A card inside a longer run ("call 415 555 0132 4111 1111 1111 1111"): windows of whole groups
            # of at least 3 digits, as cards are written.
            for i in range(len(groups)):
                digits = ""
                for j in range(i, len(groups)):
                    s, e = groups[j]
                    if e - s < 3:
                        break
                    digits += text[s:e]
                    if len(digits) > 19:
                        break
                    if len(digits) >= 13 and _is_card(digits):
                        spans.append((groups[i][0], e))
        if not spans:
            continue
        if _NOT_CARD_LABEL.search(text, max(0, run.start() - 40), run.start()):
            if card_context is None:
                card_context = _CARD_WORDS.search(text) is not None
            if not card_context:  # "Invoice 5499 ..." with no word about cards anywhere: an id, not a card
                continue
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
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])")


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


def _iban_hits(text: str, lower: str) -> Iterator[_Hit]:
    if not _HAS_DIGITS.search(text):
        return
    for match in _IBAN.finditer(text):
        candidate = match.group()
        expected = _IBAN_LENGTHS.get(candidate[:2].upper())
        if expected is None:
            continue
        # The run may carry a trailing word ("GB27 ULDM ... 81 THX"): cut it at the country's length.
        count = 0
        for i, ch in enumerate(candidate):
            if ch != " ":
                count += 1
            if count == expected:
                cut = candidate[: i + 1]
                at_boundary = i + 1 == len(candidate) or candidate[i + 1] == " "
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


_ID_WORDS = ("passport", "licen", "national", "insurance", "tax", "aadhaar", "personal", "id card")


def _national_id_hits(text: str, lower: str) -> Iterator[_Hit]:
    if not _HAS_DIGITS.search(text):
        return
    if "-" in text:
        for match in _SSN_DASHED.finditer(text):
            yield match.start(), match.end(), "ssn"
    if "ss" in lower or "social" in lower:
        for match in _SSN_CONTEXT.finditer(text):
            yield match.start(1), match.end(1), "ssn"
    for match in _UK_NINO.finditer(text):
        yield match.start(), match.end(), "national_id"
    if any(word in lower for word in _ID_WORDS):
        for match in _ID_CONTEXT.finditer(text):
            value = match.group(1)
            if sum(c.isdigit() for c in value) >= 4:
                yield match.start(1), match.end(1), "national_id"


# ---------------------------------------------------------------------------------------------------------
# Passwords given as values, and generic secret assignments ("client_secret = ...").

_PASSWORD_KEY = re.compile(
    r"(?<![A-Za-z0-9])(?:pass(?:word|wd|phrase|code)?|pwd|pw|pin(?:[ \t]*(?:code|number))?|contrase[ñn]a"
    r"|passwort|mot[ \t]+de[ \t]+passe)(?![A-Za-z])(?:[_\-][A-Za-z0-9]{1,20}){0,2}",
    re.IGNORECASE,
)
# How the value is introduced; each with how strong the value must look.
_SEP_ASSIGN = re.compile(r"[\"']?[ \t]*(?:\([^()\n]{0,20}\))?[ \t]*(?::=|=>|==?|:|->)[ \t]*(?:\r?\n[ \t]*)?")
_SEP_IS = re.compile(
    r"(?:[ \t]+(?:for|to|of|on|at)[ \t]+(?:(?:the|my|our|your|his|her|their|this|that)[ \t]+)?[^\s:=\x00]{1,40}"
    r"(?:[ \t]+[^\s:=\x00]{1,40})?)?"
    r"(?:'s|’s|[ \t]*[:=]|[ \t]+(?:is|was|will[ \t]+be|should[ \t]+be|remains))"
    r"(?:[ \t]+(?:now|still|currently|just|actually|simply|always))?[ \t]*:?[ \t]*",
    re.IGNORECASE,
)
_SEP_TO = re.compile(r"[ \t]+(?:is[ \t]+)?(?:(?:set|changed|updated|reset)[ \t]+)?to[ \t]+", re.IGNORECASE)
_SEP_SPACE = re.compile(r"[ \t]+")
_QUOTED_VALUE = re.compile(r"[\"'`“‘]([^\"'`“”‘’\n\x00]{1,128})[\"'`”’]")
_BARE_VALUE = re.compile(r"[^\s\x00]{1,128}")
_TRAILING_PUNCT = ".,;:)]}>\"'”’"

_NOT_A_PASSWORD = frozenset(
    re.findall(
        r"\S+",
        """a an the this that these those my your our his her their its it me you we they he she them us i
    is are was were be been being am has have had will would should must can could may might do does did
    in on at to for from with by of as about into over under near via per and or but if then when where which
    what who how why not no none nil null n/a na tbd tba unknown unset empty blank missing required optional
    needed necessary mandatory same different correct incorrect wrong right invalid valid expired weak strong
    secure insecure safe unsafe good bad short long too very so also still now just only case sensitive
    protected encrypted hashed hidden stored saved set reset changed updated forgotten lost here there below
    above attached included enclosed see ask check use using sent provided shared known new old default
    manager managers reset-link link prompt field box screen page policy policies rules requirements
    please ok okay yes yet again changing expiring incorrectly true false on off enabled disabled""",
    )
)


def _password_value_ok(value: str, strength: str) -> bool:
    if _is_placeholder(value):
        return False
    low = value.lower()
    if low in _NOT_A_PASSWORD or low.startswith(("http://", "https://", "www.")):
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_other = any(not c.isalpha() for c in value)
    if strength == "weak":  # "password: x", "pwd=x"
        return len(value) >= 3
    if strength == "medium":  # "password is x"
        if len(value) < 4:
            return False
        # "is expired", "is missing", "is currently": an ordinary word, not a value
        return not (value.isalpha() and value.islower() and low.endswith(("ed", "ing", "ly")))
    # strong: "pass x", "password to x" need a value that cannot be an ordinary word
    return len(value) >= 6 and has_alpha and has_other


def _read_value(text: str, pos: int) -> tuple[int, int, bool] | None:
    """The value starting at ``pos``: (start, end, quoted). A quoted value may hold spaces."""
    quoted = _QUOTED_VALUE.match(text, pos)
    if quoted is not None:
        return quoted.start(1), quoted.end(1), True
    bare = _BARE_VALUE.match(text, pos)
    if bare is None:
        return None
    start, end = bare.span()
    while end > start and text[end - 1] in _TRAILING_PUNCT:
        end -= 1
    return (start, end, False) if end > start else None


_PASSWORD_WORDS = ("pass", "pw", "pin", "contrase")  # "passwort", "mot de passe" contain "pass"


def _password_hits(text: str, lower: str) -> Iterator[_Hit]:
    if not any(word in lower for word in _PASSWORD_WORDS):
        return
    for key in _PASSWORD_KEY.finditer(text):
        word = key.group().lower()
        is_pin = word.startswith("pin")
        ambiguous = word == "pass"  # "my pass is Gold", "boarding pass" : only a password-like value counts
        for sep, strength in ((_SEP_ASSIGN, "weak"), (_SEP_IS, "medium"), (_SEP_TO, "strong"),
                              (_SEP_SPACE, "strong")):  # fmt: skip
            m = sep.match(text, key.end())
            if m is None:
                continue
            found = _read_value(text, m.end())
            if found is None:
                continue
            start, end, quoted = found
            value = text[start:end]
            if quoted:  # quotes mark a value: "the wifi pass is 'jumping jacks'"
                strength = "weak"
            elif ambiguous:  # "boarding pass: Gate 12"
                strength = "strong"
            if is_pin:
                ok = value.isascii() and value.isdigit() and 4 <= len(value) <= 8
            else:
                ok = _password_value_ok(value, strength)
            if ok:
                yield start, end, "pin" if is_pin else "password"
                break


_SECRET_KEY = re.compile(
    r"(?:api[_\-. ]?key|apikey|access[_\-. ]?key|secret|auth[_\-. ]?token|access[_\-. ]?token|refresh[_\-. ]?token"
    r"|token|private[_\-. ]?key|signing[_\-. ]?key|encryption[_\-. ]?key|licen[cs]e[_\-. ]?key|credentials?"
    r"|bearer)(?![A-Za-z])[\w\-]{0,30}",
    re.IGNORECASE,
)
_SECRET_SEP = re.compile(r"[\"'\]]{0,2}[ \t]*(?::=|=>|==?|:|[ \t](?i:is)[ \t]|[ \t](?=[A-Za-z0-9+/=_\-.~]{20}))[ \t]*")
_SECRET_VALUE = re.compile(r"[\"'`]?([A-Za-z0-9+/=_\-.~]{12,256})")


_SECRET_WORDS = ("key", "secret", "token", "credential", "bearer")


def _secret_hits(text: str, lower: str) -> Iterator[_Hit]:
    if not any(word in lower for word in _SECRET_WORDS):
        return
    for key in _SECRET_KEY.finditer(text):
        sep = _SECRET_SEP.match(text, key.end())
        if sep is None:
            continue
        value = _SECRET_VALUE.match(text, sep.end())
        if value is None:
            continue
        start, end = value.span(1)
        while end > start and text[end - 1] in ".,":
            end -= 1
        secret = text[start:end]
        if not _is_placeholder(secret) and _looks_random(secret, min_len=12):
            yield start, end, "secret"


# ---------------------------------------------------------------------------------------------------------
# Assembly: every detector, then overlapping hits merged (the most specific kind names the merged span).

_DETECTORS: tuple[Callable[[str, str], Iterator[_Hit]], ...] = (
    _private_key_hits,
    _token_hits,
    _card_hits,
    _iban_hits,
    _national_id_hits,
    _password_hits,
    _secret_hits,
)
_GENERIC_KINDS = {"secret": 3, "password": 2, "pin": 2, "national_id": 1}


def _rank(kind: str) -> int:
    return _GENERIC_KINDS.get(kind, 0)


def find_sensitive(text: str) -> list[Finding]:
    """Every secret or sensitive value in ``text``, as non-overlapping findings sorted by position.

    Already redacted values (``[REDACTED:<kind>]``) are not found again.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    if not text:
        return []
    masked = _mask_markers(text)
    lower = masked.lower()
    hits: list[_Hit] = []
    for detector in _DETECTORS:
        for start, end, kind in detector(masked, lower):
            # Never let a span start or end inside an earlier marker.
            while start < end and masked[start] == _OPAQUE:
                start += 1
            while end > start and masked[end - 1] == _OPAQUE:
                end -= 1
            if start < end:
                hits.append((start, end, kind))
    if not hits:
        return []
    hits.sort()
    findings: list[Finding] = []
    cur_start, cur_end, cur_kind = hits[0]
    best = (_rank(cur_kind), -(cur_end - cur_start))  # the most specific kind, then the longest hit, names a span
    for start, end, kind in hits[1:]:
        if start < cur_end:  # overlaps: merge
            cur_end = max(cur_end, end)
            key = (_rank(kind), -(end - start))
            if key < best:
                best, cur_kind = key, kind
        else:
            findings.append(Finding(cur_kind, cur_start, cur_end))
            cur_start, cur_end, cur_kind = start, end, kind
            best = (_rank(kind), -(end - start))
    findings.append(Finding(cur_kind, cur_start, cur_end))
    return findings


def _apply(text: str, findings: list[Finding]) -> str:
    parts: list[str] = []
    pos = 0
    for finding in sorted(findings, key=lambda f: (f.start, f.end)):
        start = max(finding.start, pos)
        end = min(finding.end, len(text))
        if end <= start:
            continue
        parts.append(text[pos:start])
        parts.append(f"[REDACTED:{finding.kind}]")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


_MAX_PASSES = 16


def _redact_all(text: str, findings: list[Finding]) -> tuple[str, set[str]]:
    """Mask ``findings``, then rescan until nothing is found (masking can expose a neighbouring value)."""
    kinds: set[str] = set()
    for _ in range(_MAX_PASSES):
        if not findings:
            break
        kinds.update(f.kind for f in findings)
        text = _apply(text, findings)
        findings = find_sensitive(text)
    return text, kinds


def redact(text: str, findings: list[Finding] | None = None) -> str:
    """``text`` with each finding replaced by ``[REDACTED:<kind>]``.

    Without ``findings``, the text is scanned (and rescanned after masking) so that nothing sensitive is
    left: ``find_sensitive(redact(text)) == []``. With ``findings`` (from :func:`find_sensitive` on the same
    text), exactly those spans are masked.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    if findings is not None:
        return _apply(text, findings)
    return _redact_all(text, find_sensitive(text))[0]


# ---------------------------------------------------------------------------------------------------------
# Prompt injection: text that addresses the AI agent and tries to change what it does. Ordinary
# instructions to a person ("to reset the router, hold the button") do not name the agent, its
# instructions, its prompt, its tools or its memory, and are not flagged.

_AI = r"(?:ai|a\.i\.|assistant|agent|chat ?bot|bot|llm|language model|model|gpt|chatgpt|claude|copilot)"
_AI_ANCHORS = "ai a.i. assistant agent bot llm model gpt claude copilot"
# (anchors, pattern): the pattern only runs if one of its anchors (lower case) occurs in the text, which keeps
# the common case fast; every match of the pattern contains one of its anchors.
_INJECTION_RULES: list[tuple[str, str]] = [
    # "ignore all previous instructions", "disregard your rules", "override the system prompt"
    ("ignor disregard forget overrid bypass overrule drop abandon discard skip",
     r"\b(?:ignore|disregard|forget|override|bypass|overrule|drop|abandon|discard|skip)\s+(?:about\s+)?"
     r"(?:(?:all|any|every|each|the|your|my|of|these|those|previous|prior|above|earlier|preceding|original"
     r"|initial|existing|current|old|system|safety|security|former|other|given|developer|openai|anthropic)\s+){0,4}"
     r"(?:instructions?|rules?|prompts?|directions?|directives?|guidelines?|guardrails?|policies|constraints?"
     r"|restrictions?|programming|commands?|context|messages?|filters?|training|limitations?)\b"),
    # "forget everything you were told", "disregard all of the above"
    ("ignor disregard forget",
     r"\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|anything|all(?:\s+of)?(?:\s+(?:this|that|it))?)"
     r"\s+(?:you(?:'ve|\s+have|\s+were|\s+know|\s+learned)|above|before|previously|prior|earlier|so\s+far"
     r"|until\s+now|(?:the\s+)?above|(?:that\s+)?(?:came|was\s+said)\s+before)"),
    # chat-template and role tags
    ("<", r"<\s*/?\s*(?:system|assistant|user|instructions?|sys|prompt|im_start|im_end|developer)\s*/?\s*>"),
    ("< [", r"<\|(?:im_start|im_end|system|endoftext|assistant|user)\|>|\[/?(?:INST|SYS|SYSTEM)\]|<<\s*/?SYS\s*>>"),
    ("#", r"^[ \t]*#{1,4}[ \t]*(?:system|instruction|new instruction)s?\b"),
    # a note dressed as coming from the system, an admin or the developer
    ("system admin developer root operator",
     r"\b(?:system|admin(?:istrator)?|developer|root|operator)\s+(?:note|message|override|notice|instruction"
     r"|command|prompt|update|alert)s?\s*[:\-]"),
    ("system assistant developer admin",
     r"^[ \t]*(?:system|assistant|developer|admin)[ \t]*:[ \t]*(?:you|ignore|disregard|forget|always|never"
     r"|from\s+now|new\s+instructions?|override|reveal|do\s+not|don'?t)\b"),
    ("system", r"\bsystem\s+prompt\b"),
    ("instruction directive order rule command",
     r"\b(?:new|updated|revised|additional|real|actual|hidden|secret|special|important)\s+(?:system\s+)?"
     r"(?:instructions?|directives?|orders|rules|commands)\s+(?:for|to)\s+(?:the\s+|all\s+|any\s+)?" + _AI + r"s?\b"),
    ("instruction directive message note order command",
     r"\b(?:instructions?|directives?|message|note|orders|commands)\s+(?:for|to)\s+(?:the\s+|all\s+|any\s+)?"
     + _AI + r"s?\s*[:\-]"),
    # persona switches and jailbreaks
    ("you",
     r"\byou(?:'re|\s+are)\s+(?:now|no\s+longer|henceforth)\b\s*(?:(?:a|an|the|my|in|called|named)\s+)?"
     r"(?:(?-i:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*)\b|(?:\w+\s+){0,2}(?:ai|assistant|model|bot|chatbot|agent"
     r"|persona|character|mode|jailbroken|unrestricted|unfiltered|uncensored|free|evil|bound|restricted|limited"
     r"|required|obliged)\b)"),
    ("pretend imagine act behave roleplay role-play play",
     r"\b(?:pretend|imagine|act|behave|roleplay|role-play|play\s+the\s+role)\s+(?:that\s+)?(?:you\s+are|you're"
     r"|to\s+be|as(?:\s+if\s+you\s+(?:are|were|had))?|of)\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,3}?(?:ai|assistant"
     r"|model|chatbot|bot|character|persona|jailbroken|unrestricted|unfiltered|uncensored|evil|dan)\b"),
    ("jailbreak developer dan anything god",
     r"\b(?:jailbreak(?:ed|ing)?|developer\s+mode|dan\s+mode|do\s+anything\s+now|god\s+mode)\b"),
    ("restriction limit filter censor guardrail guideline rule",
     r"\b(?:without|free\s+(?:of|from)|no)\s+(?:any\s+)?(?:ethical\s+|moral\s+|content\s+|safety\s+)?"
     r"(?:restrictions|limitations|filters|censorship|guardrails|guidelines|rules)\b"
     r"|\b" + _AI + r"\s+(?:without|with\s+no)\s+(?:any\s+)?(?:restrictions|limits|filters|rules)"),
    # standing orders: "from now on respond ...", "when the user asks X, always say Y"
    ("now henceforth forward rest",
     r"\b(?:from\s+now\s+on|henceforth|going\s+forward|for\s+the\s+rest\s+of\s+(?:this|the)\s+(?:conversation"
     r"|chat|session))\b[,:]?\s+(?:you\s+)?(?:(?:must|should|will|shall|are\s+to)\s+)?(?:always\s+|only\s+"
     r"|never\s+)?(?:respond|reply|answer|speak|write|talk|act|behave|pretend|say|refer|call|ignore|obey|follow"
     r"|output|use|only|always|never|address|sign|end|begin|start|include|add|recommend|tell)\b"),
    ("when if",
     r"\b(?:when(?:ever)?|if)\s+(?:the\s+|a\s+|any\s+)?(?:user|human|customer|people|someone|anyone)\s+"
     r"(?:asks?|says?|mentions?|types?|requests?|inquires?|enquires?|wants?|queries|talks?|writes?)\b[^.\n]{0,80}?"
     r"\b(?:always|never|say|tell\s+(?:them|him|her|the\s+user)|respond|reply|answer|recommend|claim|insist"
     r"|redirect|pretend)\b"),
    # tools, memory and exfiltration
    ("_",
     r"\b(?:call|invoke|run|execute|trigger|use|fire)\s+(?:the\s+|your\s+|a\s+)?[`'\"]?[A-Za-z][A-Za-z0-9]*"
     r"(?:_[A-Za-z0-9]+)+[`'\"]?(?:\(|\s+(?:tool|function|command|action|api|endpoint)\b)"),
    ("tool function plugin",
     r"\b(?:call|invoke|execute|trigger)\s+(?:the\s+|your\s+|a\s+|any\s+)?(?:\S+\s+){0,2}?(?:tool|function"
     r"|plugin)s?\b"),
    ("store save remember memori record add keep write",
     r"\b(?:store|save|remember|memori[sz]e|record|add|keep|write)\s+(?:this|these|that|it|the\s+following)\s+"
     r"(?:(?:note|text|message|instruction)\s+)?(?:as\s+(?:an?\s+)?(?:permanent|persistent|new|core|standing"
     r"|system|global|top|high|priority|important|\s)*(?:rule|instruction|memory|fact|directive|preference"
     r"|policy|guideline)|permanently|forever|in\s+(?:your|long[- ]term|permanent)\s+memory)"),
    ("never don do",
     r"\b(?:never|don'?t|do\s+not)\s+(?:mention|reveal|tell|disclose|inform|let|show|say)\s+(?:the\s+user\s+"
     r"|anyone\s+|them\s+|it\s+)?(?:about\s+|on\s+)?(?:this|these)\s+(?:note|message|instructions?|text|prompt"
     r"|comment|rule)"),
    ("user",
     r"\bthe\s+user\s+(?:has\s+)?(?:already\s+)?(?:authori[sz]ed|approved|allowed|permitted|consented|granted"
     r"|instructed|asked)\s+(?:you|the\s+" + _AI + r")\s+to\b"),
    ("@ http www. .com .net .io .org .ru .xyz",
     r"\b(?:send|email|e-mail|forward|upload|post|transmit|leak|exfiltrate|copy|share|dump|export)\s+(?:all\s+"
     r"|any\s+|every\s+)?(?:of\s+)?(?:the\s+)?(?:(?:user'?s?|users'?|customer'?s?|their|this|conversation|chat"
     r"|private|personal|stored|saved|secret|internal|confidential|memory|previous|entire)\s+){1,3}(?:files?"
     r"|data|documents?|emails?|messages?|conversations?|history|credentials?|passwords?|api\s+keys?|keys"
     r"|tokens?|secrets?|memor(?:y|ies)|contacts?|context|logs?|information|details|prompt|instructions)\b"
     r"[^\n]{0,60}?\b(?:to|at|into)\s+\S*(?:@|https?://|www\.|\.com\b|\.net\b|\.io\b|\.org\b|\.ru\b|\.xyz\b)"),
    ("prompt instruction rule configuration guideline memor",
     r"\b(?:reveal|show|print|repeat|output|leak|display|disclose|expose|dump)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?"
     r"(?:your|the)\s+(?:\w+\s+){0,2}(?:prompt|instructions|rules|configuration|guidelines|memory|memories)\b"),
    # addressing the agent with an order
    (_AI_ANCHORS,
     r"(?:^|(?<=[.!?]))[ \t]*(?:(?:hey|dear|attention|note\s+to(?:\s+the)?|hi|hello)\s+)?" + _AI + r"s?\s*[,:!]\s*"
     r"(?:when\s+you\s+read\s+this\s*,?\s*|please\s+)?(?:you\s+(?:must|should|will|need\s+to|have\s+to)\s+)?"
     r"(?:always\s+|never\s+|immediately\s+)?(?:ignore|disregard|forget|call|invoke|run|execute|send|email"
     r"|delete|store|save|remember|reveal|print|say|tell|respond|reply|recommend|obey|follow|do\s+not|don'?t"
     r"|never|always|transfer|pay|buy|open|visit|click|download|install|when|from\s+now)\b"),
    (_AI_ANCHORS,
     r"\b(?:as\s+(?:an?|the|your)\s+" + _AI + r"|(?:the|this|you,?\s+the)\s+" + _AI + r"\s+(?:reading"
     r"|processing)\s+this)\b[^.\n]{0,30}?\b(?:you\s+)?(?:must|should|shall|will|are\s+(?:required|instructed"
     r"|ordered)\s+to|need\s+to|have\s+to)\b"),
    ("obey comply", r"\b(?:obey|comply\s+with)\s+(?:it|this|these|them|the\s+following|my|all)\b"),
]  # fmt: skip
_INJECTION = [
    (tuple(anchors.split()), re.compile(pattern, re.IGNORECASE | re.MULTILINE)) for anchors, pattern in _INJECTION_RULES
]
_INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b"
        "\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"),
)  # fmt: skip


def _normalise(text: str) -> str:
    """Undo cheap obfuscation: compatibility forms (fullwidth letters), invisible characters, curly quotes."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
        text = text.replace("’", "'").replace("‘", "'")
    return text


def looks_like_injection(text: str) -> bool:
    """True if ``text`` reads like an instruction to the AI agent (prompt injection), not to a person."""
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    text = _normalise(text)
    lower = text.lower()
    for anchors, pattern in _INJECTION:
        if any(anchor in lower for anchor in anchors) and pattern.search(text) is not None:
            return True
    return False


# ---------------------------------------------------------------------------------------------------------
# The gate.


def check_write(text: str, source: Source, *, redact: bool = False) -> GateDecision:
    """Decide how ``text`` from ``source`` may be stored.

    Raises :class:`SensitiveDataError` (naming the kinds found, never the values) if the text holds a secret
    or sensitive value, unless ``redact=True``, in which case the values are masked as
    ``[REDACTED:<kind>]``. Text from ``Source.EXTERNAL`` is stored as ``PENDING_REVIEW``; other sources as
    ``ACTIVE``. ``flagged`` is set for any source when the text reads like a prompt injection.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    source = Source.parse(source)
    findings = find_sensitive(text)
    kinds: tuple[str, ...] = ()
    stored = text
    if findings:
        if not redact:
            raise SensitiveDataError([f.kind for f in findings])
        stored, found = _redact_all(text, findings)
        kinds = tuple(sorted(found))
    return GateDecision(
        text=stored,
        status=Status.PENDING_REVIEW if source is Source.EXTERNAL else Status.ACTIVE,
        flagged=looks_like_injection(text),
        redacted_kinds=kinds,
    )


def check_rule(source: Source) -> None:
    """Refuse a rule written directly from an untrusted (external) source.

    Rules steer the agent, so external text may only become a rule after review: store it with
    ``source=external`` (it is kept as ``pending_review``), then have a user approve it.
    """
    source = Source.parse(source)
    if source is Source.EXTERNAL:
        raise UntrustedContentError(
            "a rule cannot be written directly from an external source: external text could be a prompt "
            "injection. Store it as a memory with source='external' (it is kept as pending_review) and have a "
            "user approve it, or write the rule with source='user' if the user stated it"
        )
