"""Passwords and PINs given as values: ``password: x``, ``my pin is 1234``, ``the wifi pass is 'jumping jacks'``."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memtend.policies.gate.common import Hit, is_placeholder
from memtend.policies.gate.prefilter import LongText

__all__ = ["password_hits"]


_PASSWORD_KEY = re.compile(
    r"(?<![A-Za-z0-9])(?:pass(?:words?|wd|phrase|code)?|pwd|pw|pin(?:[ \t]*(?:code|number))?|contrase[ñn]as?"
    r"|passw(?:ort|örter)|kennw(?:ort|örter)|mot[ \t]+de[ \t]+passe|mdp|clave"
    r"|senha|wachtwoord|has[łl]o|l[öo]senord(?:et)?|passord(?:et)?|adgangskoden?|salasana|[şs]ifre|пароль"
    r"|密码|密碼|パスワード|비밀번호"
    r"|(?-i:[A-Z][A-Z0-9]{1,15}(?:PASSWORD|PASSWD|PWD)))"
    r"(?![A-Za-z])(?:[_\-][A-Za-z0-9]{1,20}){0,2}",
    re.IGNORECASE,
)
# Keys that are also ordinary words or abbreviations ("boarding pass", "la clave del éxito", an MDP in a paper):
# only a value that cannot be an ordinary word counts.
_AMBIGUOUS_KEYS = frozenset(("pass", "clave", "mdp"))
# How the value is introduced; each with how strong the value must look.
_SEP_ASSIGN = re.compile(r"[\"']?[ \t]*(?:\([^()\n]{0,20}\))?[ \t]*(?::=|=>|==?|:|->)[ \t]*(?:\r?\n[ \t]*)?")
_SEP_IS = re.compile(
    r"(?:[ \t]+(?:for|to|of|on|at)[ \t]+(?:(?:the|my|our|your|his|her|their|this|that)[ \t]+)?[^\s:=\x00]{1,40}"
    r"(?:[ \t]+[^\s:=\x00]{1,40})?)?"
    r"(?:'s|’s|[ \t]*[:=]|[ \t]+(?:is|was|will[ \t]+be|should[ \t]+be|remains))"
    r"(?:[ \t]+(?:now|still|currently|just|actually|simply|always))?[ \t]*:?[ \t]*",
    re.IGNORECASE,
)
# German, French and Spanish: "das Passwort für das WLAN lautet X", "le mot de passe du wifi est X",
# "mon mdp c'est X", "la contraseña del banco es X". These verbs also introduce states ("ist abgelaufen",
# "est trop court"), so the value must look like a password.
_SEP_FOREIGN = re.compile(
    r"(?:[ \t]+(?:für|fuer|vom|von|zum|zur|des|du|de|del|pour|para|por|do|da|van|voor|för|til|от|для)[ \t]+"
    r"(?:(?:das|die|den|dem|der|le|la|l'|l’|les|el|los|las|mon|ma|mes|mi|mis|tu|ton|ta|unser|unsere|unseren"
    r"|mein|meine|meinen|notre|nuestro|nuestra)[ \t]*)?[^\s:=\x00]{1,40})?"
    r"(?:[ \t]+(?:ist|lautet|war|hei(?:ß|ss)t|est|était|c'est|c’est|es|era|sería|é|è|jest|är|er|on|—|-))"
    r"[ \t]*:?[ \t]*",
    re.IGNORECASE,
)
_SEP_TO = re.compile(r"[ \t]+(?:is[ \t]+)?(?:(?:set|changed|updated|reset)[ \t]+)?to[ \t]+", re.IGNORECASE)
_SEP_SPACE = re.compile(r"[ \t]+")
_QUOTED_VALUE = re.compile(r"[\"'`“‘«„][ \t]?([^\"'`“”‘’«»„\n\x00]{1,128}?)[ \t]?[\"'`”’»“]")
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
    if is_placeholder(value):
        return False
    low = value.lower()
    if low in _NOT_A_PASSWORD or low.startswith(("http://", "https://", "www.")):
        return False
    if strength == "weak":  # "password: x", "pwd=x"
        return len(value) >= 3
    if strength == "medium":  # "password is x"
        if len(value) < 4:
            return False
        # "is expired", "is missing", "is currently": an ordinary word, not a value
        return not (value.isalpha() and value.islower() and low.endswith(("ed", "ing", "ly")))
    # strong: "pass x", "password to x" need a value that cannot be an ordinary word; a sentence's closing
    # "!" or "?" does not make one ("make sure the tests pass first!")
    core = value.rstrip("!?")
    return len(core) >= 6 and any(c.isalpha() for c in core) and any(not c.isalpha() for c in core)


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


# One of these (lower case) must occur for any key to match ("passwort", "passord" hold "pass").
_PASSWORD_WORDS = re.compile(
    "pass|pw|pin|contrase|kennw|mdp|clave|senha|wachtwoord|hasło|haslo|senord|adgangskode|salasana|ifre|пароль"
    "|密码|密碼|パスワード|비밀번호"
)


# The value before its key: "hunter2 is my password", "'jumping jacks' was the wifi passphrase", "4821 is my pin".
# The key must close the clause ("... is my password manager" names no value).
_VALUE_FIRST = re.compile(
    r"(?:[\"'`“‘«„][ \t]?(?P<quoted>[^\"'`“”‘’«»„\n\x00]{1,128}?)[ \t]?[\"'`”’»“]|(?P<bare>[^\s\x00]{1,128}))"
    r"[ \t]+(?:is|was|will[ \t]+be|remains)[ \t]+(?:still[ \t]+|now[ \t]+)?(?:my|our|your|his|her|their|the)[ \t]+"
    r"(?:(?:new|old|current|temporary|wifi|wi-fi|email|e-mail|bank|laptop|phone|admin|login|account)[ \t]+){0,2}"
    r"(?P<key>pass(?:word|phrase|code)|pwd|pin(?:[ \t]+(?:code|number))?)s?(?![\w\-])"
    r"(?![ \t]+(?:manager|policy|reset|field))",
    re.IGNORECASE,
)


def _value_first_hits(text: str) -> Iterator[Hit]:
    for m in _VALUE_FIRST.finditer(text):
        is_pin = m.group("key").lower().startswith("pin")
        name = "quoted" if m.group("quoted") is not None else "bare"
        start, end = m.span(name)
        value = m.group(name)
        if is_pin:
            ok = value.isascii() and value.isdigit() and 4 <= len(value) <= 8
        else:
            ok = _password_value_ok(value, "weak" if name == "quoted" else "strong")
        if ok:
            yield start, end, "pin" if is_pin else "password"


def password_hits(text: str, lower: str, long: LongText | None = None) -> Iterator[Hit]:
    if long is not None:
        if not long.any(_PASSWORD_WORDS.pattern.split("|")):
            return
    elif _PASSWORD_WORDS.search(lower) is None:
        return
    yield from _value_first_hits(text)
    for key in _PASSWORD_KEY.finditer(text):
        word = key.group().lower()
        is_pin = word.startswith("pin")
        ambiguous = word in _AMBIGUOUS_KEYS  # "my pass is Gold", "boarding pass": only a password-like value
        for sep, strength in ((_SEP_ASSIGN, "weak"), (_SEP_IS, "medium"), (_SEP_FOREIGN, "strong"),
                              (_SEP_TO, "strong"), (_SEP_SPACE, "strong")):  # fmt: skip
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
            elif ambiguous or (strength == "medium" and not word.startswith(("pass", "pw", "pin"))):
                # "boarding pass: Gate 12"; "het wachtwoord is verlopen" (English "is" rules read English words)
                strength = "strong"
            if is_pin:
                ok = value.isascii() and value.isdigit() and 4 <= len(value) <= 8
            else:
                ok = _password_value_ok(value, strength)
            if ok:
                yield start, end, "pin" if is_pin else "password"
                break
