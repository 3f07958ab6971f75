"""Tokens and keys: cloud and SaaS keys and tokens, JWTs, private key blocks, connection strings with a password,
and generic secret assignments (``client_secret = ...``).

The token formats kept by ``detect-secrets`` are used through its plugin classes; newer formats are written here.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
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

from memtend.policies.gate.common import Hit, is_placeholder, looks_random
from memtend.policies.gate.prefilter import LongText, matches_at

__all__ = ["private_key_hits", "secret_hits", "token_hits"]

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-]*")
_JWT_CHARS = re.compile(r"[A-Za-z0-9_\-.=+/]*")


# ---------------------------------------------------------------------------------------------------------
# Token formats. Where detect-secrets keeps a format, its plugin's compiled regexes are used.


@dataclass(frozen=True)
class _TokenRule:
    kind: str
    pattern: Pattern[str]
    group: int = 0
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
    return lambda value: looks_random(value[prefix_len:], min_len=min_len)


def _build_token_rules() -> list[_TokenRule]:
    rules: list[_TokenRule] = []

    def add(kind: str, patterns: list[Pattern[str]], *, left_boundary: bool = True, **options: object) -> None:
        """One rule per pattern; ``left_boundary``: the character before a match must not be a letter or digit."""
        for pattern in patterns:
            if left_boundary:
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
        validate=lambda v: looks_random(v.split("-", 2)[-1], min_len=20),
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
        validate=lambda v: looks_random(v.rsplit("_", 1)[-1]),
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
        validate=lambda v: looks_random(v[2:], min_len=32, min_entropy=3.5),
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
        validate=lambda v: not is_placeholder(v),
        needles=("://",),
    )
    return rules


_TOKEN_RULES = _build_token_rules()
_NEEDLES = tuple(sorted({needle for rule in _TOKEN_RULES for needle in rule.needles}))


def token_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    has = long.has if long is not None else lower.__contains__
    present = {needle for needle in _NEEDLES if has(needle)}
    for rule in _TOKEN_RULES:
        if rule.needles and present.isdisjoint(rule.needles):
            continue
        covered = -1  # end of the last hit of this rule: later matches inside it add nothing
        for match in rule.pattern.finditer(text):
            start, end = match.span(rule.group)
            if start < 0 or start == end or start < covered:
                continue
            if rule.extend is not None:
                extended = rule.extend.match(text, end)  # a `[...]*` pattern: always matches
                end = extended.end() if extended is not None else end
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


def private_key_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    has = long.has if long is not None else lower.__contains__
    if not has("private") and not has("putty"):
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


_SECRET_KEY = re.compile(
    r"(?:api[_\-. ]?key|apikey|access[_\-. ]?key|secret|auth[_\-. ]?token|access[_\-. ]?token|refresh[_\-. ]?token"
    r"|token|private[_\-. ]?key|signing[_\-. ]?key|encryption[_\-. ]?key|licen[cs]e[_\-. ]?key|credentials?"
    r"|bearer)(?![A-Za-z])[\w\-]{0,30}",
    re.IGNORECASE,
)
_SECRET_SEP = re.compile(r"[\"'\]]{0,2}[ \t]*(?::=|=>|==?|:|[ \t](?i:is)[ \t]|[ \t](?=[A-Za-z0-9+/=_\-.~]{20}))[ \t]*")
_SECRET_VALUE = re.compile(r"[\"'`]?([A-Za-z0-9+/=_\-.~]{12,256})")


_SECRET_WORDS = ("key", "secret", "token", "credential", "bearer")


# Where a key of ``_SECRET_KEY`` can start (lower case).
_SECRET_KEY_STARTS = (
    "api", "access", "secret", "auth", "token", "refresh", "private", "signing", "encryption", "licen", "credential",
    "bearer",
)  # fmt: skip


def secret_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    has = long.has if long is not None else lower.__contains__
    if not any(has(word) for word in _SECRET_WORDS):
        return
    if long is None:
        keys = _SECRET_KEY.finditer(text)
    else:
        keys = matches_at(_SECRET_KEY, text, long.words(*_SECRET_KEY_STARTS))
    for key in keys:
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
        if "/" in secret and not any(c.isupper() for c in secret):
            continue  # a path ("credentials: vault/prod-db2"); base64 secrets mix cases
        if not is_placeholder(secret) and looks_random(secret, min_len=12):
            yield start, end, "secret"
