"""Credentials given without the word "password": URLs with a password in their user part, HTTP Basic
authorization headers, command-line password flags, and a user name and password written as a pair.

* ``redis://:pw@host``, ``amqp://user:pw@host``, ``https://bob:P%40ss@git.example.com``: the password is the span.
* ``Authorization: Basic dXNlcjpwYXNz``: the base64 value (it decodes to ``user:password``) is the span.
* ``mysql -pSECRET``, ``mysql -p SECRET``, ``sshpass -p SECRET``, ``redis-cli -a SECRET``, ``docker login -p SECRET``,
  ``curl -u user:SECRET``, ``net use ... /user:NAME SECRET``: the value is the span.
* ``credentials: alice / Secret#1``, ``log in as admin / Secret#1``, ``my login is mike:Secret#1``: the password.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from memtend.policies.gate.common import Hit, is_placeholder
from memtend.policies.gate.prefilter import LongText

__all__ = ["credential_hits", "url_password_hits"]

_TRAILING_PUNCT = ".,;:)]}>\"'”’"


def _strong(value: str) -> bool:
    """A value that cannot be an ordinary word: letters and something else, at least 6 characters."""
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and any(not c.isalpha() for c in value)
        and not is_placeholder(value)
    )


def _weak(value: str) -> bool:
    return len(value) >= 3 and not is_placeholder(value) and value.lower() not in ("pass", "password", "secret")


# ---------------------------------------------------------------------------------------------------------
# URLs with a password in the user part. The user may be empty (``redis://:pw@host``); the password may hold
# characters RFC 3986 reserves, even '@' (people write them unescaped; the last '@' before the host ends it),
# but not a space, slash or quote.

_URL_USERINFO = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@'\"<>]{0,64}:([^\s/?#'\"<>]{1,128})@"
    r"(?=[A-Za-z0-9\[])"
)


def url_password_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    if "://" not in text:
        return
    for match in _URL_USERINFO.finditer(text):
        if not is_placeholder(match.group(1)):
            yield match.start(1), match.end(1), "connection_string"


# ---------------------------------------------------------------------------------------------------------
# HTTP Basic authorization: base64 of "user:password".

_BASIC = re.compile(r"(?<![A-Za-z0-9])(?i:basic)[ \t]+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")


def _basic_credentials(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    _user, sep, password = decoded.partition(":")
    return bool(sep) and bool(password) and decoded.isprintable() and not is_placeholder(password)


# ---------------------------------------------------------------------------------------------------------
# Command-line flags that carry a password.

_VALUE = r"('[^'\n]{1,128}'|\"[^\"\n]{1,128}\"|[^\s'\"<>|&;\-][^\s'\"]{0,127})"  # not an option or a redirect
_MYSQL = r"(?:mysql(?:dump|admin|import|show|check|pump|sh)?|mariadb(?:-dump|-admin)?)"
_CLI_ATTACHED = re.compile(  # "mysql -pSECRET", "sshpass -pSECRET": any value
    r"(?<![\w\-])(?:" + _MYSQL + r"|sshpass)[ \t][^\n|;&]{0,120}?(?<=[ \t])-p(?![ \t\-])" + _VALUE
)
# "mysql -p SECRET" (strong values only: "-p shop" names a database), "sshpass -p X", "redis-cli -a X" (its -p is
# the port), "docker login -p X". Each command with its own password flags.
_CLI_SPACED = re.compile(
    r"(?<![\w\-])(?:(" + _MYSQL + r")[ \t][^\n|;&]{0,120}?(?<=[ \t])(?:-p|--password)"
    r"|(?:sshpass|(?:docker|podman)[ \t]+login)[ \t][^\n|;&]{0,120}?(?<=[ \t])(?:-p|--password)"
    r"|redis-cli[ \t][^\n|;&]{0,120}?(?<=[ \t])(?:-a|--pass))[ \t]+" + _VALUE
)
_CURL_USER = re.compile(
    r"(?<![\w\-])curl[ \t][^\n|;&]{0,200}?(?<=[ \t])(?:-u|--user)[ \t]*['\"]?[^\s:'\"]{1,64}:([^\s'\"]{1,128})"
)
_SMB_USER = re.compile(
    r"(?<![\w\-])smbclient[ \t][^\n|;&]{0,200}?(?<=[ \t])(?:-U|--user(?:=|[ \t]))[ \t]*['\"]?[^\s%'\"]{1,64}%" + _VALUE
)
_HTPASSWD = re.compile(r"(?<![\w\-])htpasswd[ \t]+-[A-Za-z]*b[A-Za-z]*[ \t]+(?:-\S+[ \t]+)*\S+[ \t]+\S+[ \t]+" + _VALUE)
_SSH_KEYGEN = re.compile(r"(?<![\w\-])ssh-keygen[ \t][^\n|;&]{0,160}?(?<=[ \t])-[NP][ \t]*" + _VALUE)
_NET_USE = re.compile(r"(?i:\bnet[ \t]+use)[ \t][^\n]{0,160}?/user:[^\s]{1,64}[ \t]+" + _VALUE)


# ---------------------------------------------------------------------------------------------------------
# A user name and a password as a pair.

_PAIR = re.compile(
    r"(?i:\b(?:credentials?|creds|log[ \t]?in(?:[ \t]+(?:details|info))?|sign[ \t]?in|account|zugangsdaten"
    r"|anmeldedaten|login-?daten|identifiants|credenciales|datos[ \t]+de[ \t]+acceso))\b"
    r"(?i:[ \t]+(?:for|für|fuer|pour|para|de|del|du|zum|zur)[ \t]+(?:\S{1,20}[ \t]+)?[^\s:=]{1,30})?"
    r"(?i:[ \t]+(?:as|is|are|was|were|sind|lauten|sont|son))?[ \t]*[:=]?[ \t]*"
    r"[\w.@+\\\-]{1,64}(?:[ \t]*/[ \t]*|:)([^\s]{1,128})"
)


def _pair_value_ok(value: str) -> bool:
    """A password in a pair: strong, with a digit or a symbol, and not a path ("vault/prod-db")."""
    if not _strong(value) or "/" in value or value.lower().startswith(("pass", "pwd", "pw")):
        return False
    if any(not (c.isalnum() or c in "-_.") for c in value):
        return True
    # Letters and digits only: mixed case too, so "vault/prod-db2" is not taken for "user/password".
    return any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _unquote(start: int, end: int, text: str) -> tuple[int, int]:
    if end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]:
        return start + 1, end - 1
    while end > start and text[end - 1] in _TRAILING_PUNCT:
        end -= 1
    return start, end


_WORDS = re.compile(
    "basic|mysql|mariadb|sshpass|redis-cli|login|curl|net use|cred|log in|sign|account|daten|identifiants|acceso"
    "|smbclient|htpasswd|ssh-keygen"
)


def credential_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    # Every form holds a flag (" -"), a pair or header separator ("/", ":", "%"), or the word "basic".
    if " -" not in text and "/" not in text and ":" not in text and "%" not in text and "basic" not in lower:
        return
    if long is not None:
        if not long.any(_WORDS.pattern.split("|")):
            return
    elif _WORDS.search(lower) is None:
        return
    if "basic" in lower:
        for match in _BASIC.finditer(text):
            if _basic_credentials(match.group(1)):
                yield match.start(1), match.end(1), "password"
    if "mysql" in lower or "mariadb" in lower or "sshpass" in lower:
        for match in _CLI_ATTACHED.finditer(text):
            start, end = _unquote(*match.span(1), text)
            if start < end and _weak(text[start:end]):
                yield start, end, "password"
    for match in _CLI_SPACED.finditer(text) if "-" in text else ():
        start, end = _unquote(*match.span(2), text)
        quoted = text[match.start(2)] in "'\""
        value = text[start:end]
        strict = match.group(1) is not None  # mysql: "-p shop" is a database name after a password prompt
        if start < end and (_strong(value) or (_weak(value) and (quoted or not strict))):
            yield start, end, "password"
    if "curl" in lower:
        for match in _CURL_USER.finditer(text):
            start, end = _unquote(*match.span(1), text)
            if start < end and _weak(text[start:end]):
                yield start, end, "password"
    for needle, pattern in (("smbclient", _SMB_USER), ("htpasswd", _HTPASSWD), ("ssh-keygen", _SSH_KEYGEN)):
        if needle in lower:
            for match in pattern.finditer(text):
                start, end = _unquote(*match.span(1), text)
                if start < end and _weak(text[start:end]):
                    yield start, end, "password"
    if "net use" in lower:
        for match in _NET_USE.finditer(text):
            start, end = _unquote(*match.span(1), text)
            if start < end and _weak(text[start:end]) and not text[start:end].startswith("/"):
                yield start, end, "password"
    for match in _PAIR.finditer(text):
        start, end = _unquote(*match.span(1), text)
        if start < end and _pair_value_ok(text[start:end]):
            yield start, end, "password"
