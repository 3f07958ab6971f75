"""The prefilter for long text finds exactly what the whole-text scans find: every detector gives the same hits
with it and without it, on texts built of secrets, near misses, numbers, separators and keywords in any order."""

from __future__ import annotations

import random

import pytest
from conftest import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memtend.policies.gate import find_sensitive
from memtend.policies.gate.normalise import normalise
from memtend.policies.gate.prefilter import LongText, long_text, matches_at
from memtend.policies.gate.sensitive import _DETECTORS, DEFAULT_POLICY, _find

# Secrets, values that nearly are, and what decides between them (labels, keywords, separators, markers).
SECRETS = [
    "4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "5500 0000 0000 0004", "378282246310005",
    "4111 1111\n1111 1111", "4111 , 1111 , 1111 , 1111", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "6011 0009 9013 9424",
    "card 4111  -  1111  -  1111  -  1111", "card 4111   \n   1111   \n   1111   \n   1111",
    "pay 4111   \r\n   1111   \r\n   1111   \r\n   1111", "4111 1111 1111 1112", "4111.1111.1111.1111",
    "415 555 0132 4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32", "DE89370400440532013000", "gb82west12345698765432",
    "FR14 2004 1010 0505 0001 3M02 606",
    "123-45-6789", "078-05-1120", "000-12-3456", "AB 12 34 56 C", "AB123456C", "QQ123456C",
    "ssn 123456789", "SS# 123 45 6789", "SSN: 123 45 6789", "social security number 123.45.6789",
    "passport number X1234567",
    "national id is 1234 5678 9012", "driver's license: D1234567", "Tax ID = 12-3456789",
    "password: hunter22", "PASSWORD=S3cr3t!x", "my pin is 4821", "pin: 1234", "hunter2 is my password",
    "the wifi pass is 'jumping jacks'", "passwort ist Geheim#12", "DB_PASSWORD=abc123XYZ",
    "AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "sk-proj-Abc123Def456Ghi789Jkl012Mno345",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "api_key = 'Zx9Qw8Er7Ty6Ui5Op4As'", "client_secret: aB3dE5gH7jK9mN1pQ3", "Bearer aB3dE5gH7jK9mN1pQ3sT5",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "BEGIN PRIVATE KEY",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==", "mysql -u root -pS3cretPw db", "redis-cli -a Hunter22x",
    "curl -u bob:Secr3t! https://x.io", "redis://:Pw123456@cache", "postgres://app:Sup3r!pw@db:5432/x",
    "login: alice / Secret#1", "credentials for prod: admin:P4ss!word",
    "123e4567-e89b-12d3-a456-426614174000", "call_4111111111111111abcdefgh", "d41d8cd98f00b204e9800998ecf8427e",
    "[REDACTED:card]", "[REDACTED:password]", "Order 4111 1111 1111 1111", "card 4111 1111 1111 1111",
    "Invoice #5499 7400 0000 0007 exp 09/28", "Part no. 123-45-6789", "SKU: AB 12 34 56 C",
    "４１１１ １１１１ １１１１ １１１１", "٤١١١١١١١١١١١١١١١", "pass\u200bword: hunter22",
]  # fmt: skip
FILLER = [
    " ", "  ", "   ", "   \n   ", "  -  ", " \t\r\n\t ", "\n", "\t", " - ", "-", ".", ",", "/", ":", "; ", " | ",
    "—", "\r\n", "=", "'", '"', "#",
    "the", "ticket", "deploy", "on", "is", "refund", "token", "key", "pass", "pin", "id", "card", "social", "api",
    "secret", "private", "national", "Order", "SKU", "exp", "pay", "42", "2024-05-01", "007", "1234", "12", "5",
    "99999999", "4111", "1111", "AB", "GB", "DE89", "x", "Q",
]  # fmt: skip
PIECES = st.sampled_from(SECRETS + FILLER)
TEXTS = st.lists(PIECES, max_size=24).map("".join)


def _each_detector(text: str) -> None:
    scan = normalise(text).text
    lower = scan.lower()
    if not scan.isascii():
        return
    long = LongText(scan, lower)
    for detector in _DETECTORS:
        assert list(detector(scan, lower, long)) == list(detector(scan, lower, None)), detector.__name__


@settings(max_examples=scaled(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_every_detector_finds_the_same_with_the_prefilter(text: str) -> None:
    _each_detector(text)
    assert _find(text, DEFAULT_POLICY, 0) == _find(text, DEFAULT_POLICY, None)


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(alphabet="0123456789 -\n\t.,/:aAbBzZ_", max_size=80))
def test_digits_and_separators_alone_give_the_same(text: str) -> None:
    _each_detector(text)


@settings(max_examples=scaled(300), deadline=None)
@given(st.text(alphabet="0123456789 x", max_size=120), st.integers(1, 14), st.integers(0, 9))
def test_digit_clusters_are_the_stretches_a_direct_count_gives(text: str, least: int, gap: int) -> None:
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    groups: list[list[int]] = []
    for i in digits:
        if groups and i - groups[-1][-1] <= gap + 1:
            groups[-1].append(i)
        else:
            groups.append([i])
    expected = [(g[0], g[-1]) for g in groups if len(g) >= least]
    assert LongText(text, text.lower()).digit_clusters(least, gap) == expected


@pytest.mark.parametrize("seed", range(3))
def test_a_long_text_with_secrets_at_random_places_gives_the_same(seed: int) -> None:
    rng = random.Random(seed)
    secrets, filler = [s for s in SECRETS if s.isascii()], [f for f in FILLER if f.isascii()]
    parts = []
    for _ in range(3000):
        parts.append(rng.choice(secrets) if rng.random() < 0.05 else rng.choice(filler))
        parts.append(rng.choice([" ", " ", "\n\n"]))
    text = "".join(parts)
    assert long_text(text, text.lower()) is not None
    found = find_sensitive(text)
    assert found == _find(text, DEFAULT_POLICY, None)
    assert len(found) > 20


def test_the_prefilter_reads_only_long_ascii_text() -> None:
    assert long_text("x" * 5000, "x" * 5000) is not None
    assert long_text("x" * 50, "x" * 50) is None
    assert long_text("é" * 5000, "é" * 5000) is None
    assert long_text("x" * 5000, "x" * 5000, None) is None


def test_matches_at_rebuilds_finditer_from_candidate_starts() -> None:
    import re

    pattern = re.compile(r"ab+|b+c")
    text = "abbbc bbc xabc abab"
    everywhere = range(len(text))
    assert [m.span() for m in matches_at(pattern, text, everywhere)] == [m.span() for m in pattern.finditer(text)]


def test_letter_pairs_answer_presence_as_a_search_does() -> None:
    text = "deploy the billing service 42 x" * 200
    long = LongText(text, text.lower())
    for needle in ("gh", "bill", "ice 4", "g s", "x", "q", "42 x", "ypass", "se", "é"):
        assert long.has(needle) == (needle in text.lower()), needle
    assert long.digit_clusters(2, 8) == [] or all(a <= b for a, b in long.digit_clusters(2, 8))
