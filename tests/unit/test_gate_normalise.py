"""The gate reads a normal form of the text (NFKC, invisible characters dropped, ASCII digits) and masks the
original characters: cards with any separator or in any script, and numbers that are ids, not cards (issue 14).

Each positive case names the exact original value; the gate must refuse it without echoing it (as written or in
ASCII digits) and ``redact`` must replace exactly that span, keeping the words around it.
"""

from __future__ import annotations

import pytest
from memtend.errors import SensitiveDataError
from memtend.policies.gate import AllowList, GatePolicy, check_write, find_sensitive, redact
from memtend.policies.gate.normalise import normalise
from memtend.records import Source

VISA = "4111111111111111"
MC = "5555555555554444"
AMEX = "378282246310005"


def to_script(text: str, zero: int) -> str:
    """``text`` with its ASCII digits written in the script whose digit zero is ``chr(zero)``."""
    return "".join(chr(zero + int(c)) if c.isascii() and c.isdigit() else c for c in text)


def groups(number: str, sep: str, sizes: tuple[int, ...] = (4, 4, 4, 4)) -> str:
    out, pos = [], 0
    for size in sizes:
        out.append(number[pos : pos + size])
        pos += size
    return sep.join(out)


def assert_refused_and_masked(before: str, value: str, after: str, kind: str) -> None:
    text = before + value + after
    with pytest.raises(SensitiveDataError) as err:
        check_write(text, Source.USER)
    assert kind in err.value.kinds
    message = str(err.value) + repr(err.value) + repr(err.value.args)
    ascii_value = normalise(value).text
    for shown in {value, ascii_value, ascii_value[-8:]}:
        assert shown not in message
    masked = check_write(text, Source.USER, redact=True)
    assert masked.text == f"{before}[REDACTED:{kind}]{after}"
    assert redact(text) == masked.text
    assert find_sensitive(masked.text) == []


# ------------------------------------------------------------------------------------------ the normal form
def test_ascii_text_is_its_own_normal_form() -> None:
    normal = normalise("card 4111 1111")
    assert normal.text == "card 4111 1111" and normal.origin is None
    assert normal.span(5, 9) == (5, 9)


def test_normal_form_maps_each_character_back_to_the_original() -> None:
    text = "ｃａｒｄ\u00a04\u200b1\u200d1١"  # full-width letters, no-break space, zero-width chars, Arabic-Indic digit
    normal = normalise(text)
    assert normal.text == "card 4111"
    start = normal.text.index("4")
    assert normal.span(start, len(normal.text)) == (text.index("4"), len(text))
    assert normal.span(0, 4) == (0, 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("٠١٢٣٤٥٦٧٨٩", "0123456789"),  # Arabic-Indic
        ("۰۱۲۳۴۵۶۷۸۹", "0123456789"),  # Extended Arabic-Indic (Persian, Urdu)
        ("०१२३४५६७८९", "0123456789"),  # Devanagari
        ("০১২৩৪৫৬৭৮৯", "0123456789"),  # Bengali
        ("๐๑๒๓๔๕๖๗๘๙", "0123456789"),  # Thai
        ("０１２３４５６７８９", "0123456789"),  # full-width
        ("𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗", "0123456789"),  # mathematical bold
        ("pass\u00adword\u2060\ufeff", "password"),  # soft hyphen, word joiner, BOM
        ("Ｐａｓｓｗｏｒｄ：", "Password:"),
        ("pаsswоrd", "password"),  # Cyrillic look-alikes inside a Latin word
        ("Москва", "Москва"),  # a Russian word keeps its letters
    ],
)
def test_digits_of_any_script_and_invisible_characters(text: str, expected: str) -> None:
    assert normalise(text).text == expected


# ------------------------------------------------------------------------------------------ card separators
@pytest.mark.parametrize(
    "value",
    [
        groups(VISA, "\n"),
        groups(VISA, "\r\n"),
        groups(VISA, "\t"),
        groups(VISA, "  "),
        groups(VISA, "\u00a0"),  # no-break space
        groups(VISA, "\u202f"),  # narrow no-break space
        groups(VISA, "."),
        groups(VISA, "/"),
        groups(VISA, "\u2013"),  # en dash
        groups(VISA, "\u2014"),  # em dash
        groups(VISA, ","),
        groups(VISA, ", "),
        groups(VISA, " / "),
        groups(VISA, "_"),
        groups(VISA, " | "),
        groups(VISA, ";"),
        groups(VISA, ":"),
        groups(AMEX, "|", (4, 6, 5)),
        groups(VISA, "\n\t"),
        groups(VISA, "\u3000"),  # ideographic space
        "4111 - 1111.1111 / 1111",  # mixed
        groups(MC, " . "),
        groups(AMEX, ".", (4, 6, 5)),
        groups(AMEX, "\t", (4, 6, 5)),
        "4\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1",
        "41111111\u200d11111111",  # zero-width joiner
        "4111\ufeff1111\u00ad1111\u20601111",  # BOM, soft hyphen, word joiner
        "4111\u200b 1111 \u200b1111 1111",
    ],
    ids=repr,
)
def test_card_with_any_separator_is_refused_and_masked(value: str) -> None:
    assert_refused_and_masked("my card is ", value, " thanks", "card")


@pytest.mark.parametrize(
    ("before", "value"),
    [
        ("Please charge ", "4962, 6318, 1613, 6071"),
        ("Kreditkarte:\n", "4112\n7874\n7301\n2614"),
        ("tarjeta ", "4549|4509|3467|6674"),
        ("my card\n", groups(VISA, "\n")),
    ],
)
def test_list_separated_card_with_a_word_about_cards_or_paying(before: str, value: str) -> None:
    assert_refused_and_masked(before, value, "", "card")


@pytest.mark.parametrize("zero", [0xFF10, 0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0x1D7CE], ids=hex)
def test_card_in_digits_of_another_script_is_refused_and_masked(zero: int) -> None:
    assert_refused_and_masked("card ", to_script(groups(VISA, " "), zero), ".", "card")
    assert_refused_and_masked("pay with ", to_script(MC, zero), " today", "card")


def test_card_with_digits_of_several_scripts_mixed() -> None:
    value = to_script(VISA[:8], 0xFF10) + to_script(VISA[8:12], 0x966) + VISA[12:]
    assert_refused_and_masked("Charge ", value, " now", "card")


def test_other_numbers_in_other_scripts() -> None:
    assert_refused_and_masked("My SSN is ", "５３６－８１－２２４７", "", "ssn")
    assert_refused_and_masked("SSN ", "4\u200b51-2\u200b3-7788", ".", "ssn")
    assert_refused_and_masked("IBAN ", "ＧＢ８２ ＷＥＳＴ １２３４ ５６９８ ７６５４ ３２", " ok", "iban")
    assert_refused_and_masked("my PIN is ", to_script("4821", 0x660), "", "pin")


@pytest.mark.parametrize(
    "value",
    [
        "DE89-3704-0044-0532-0130-00",
        "FR14.2004.1010.0505.0001.3M02.606",
        "GB82\u00a0WEST\u00a01234\u00a05698\u00a07654\u00a032",
        "GB82\u200bWEST12345698765432",
    ],
    ids=repr,
)
def test_iban_with_other_separators(value: str) -> None:
    assert_refused_and_masked("IBAN ", value, ".", "iban")


def test_allow_list_matches_the_value_as_written_or_in_normal_form() -> None:
    policy = GatePolicy(allow=AllowList(values=[VISA]))
    assert find_sensitive(f"test card {to_script(VISA, 0xFF10)}", policy=policy) == []
    assert find_sensitive(f"test card {groups(VISA, ' ')}", policy=policy) != []  # the value as matched


@pytest.mark.parametrize(
    "text",
    [
        "The meeting is on 2024.05.17 at 10.30.",
        "Call 415.555.0132 or 415/555/0133.",
        "Server 192.168.100.200 and 10.0.0.1 are up.",
        "IP 172.16.254.1, mask 255.255.255.0",
        "Prices: 1,299.00, 2,499.00, 3,999.00 and 4,199.00",
        "The dates are 2023/11/05 and 2024/01/09.",
        "Coordinates 41.1111, 11.1111 mark the spot.",
        "Version 4.11.1111.1111 is old.",
        "Phone ٠٥٠ ١٢٣ ٤٥٦٧",
        "Room ４０４ on floor ３.",
        "totals\n4111\n2222\n3333",
        # Luhn-valid 16 digits with a card issuer prefix, written as lists or table rows of short numbers:
        "Codes:\n4628\n3679\n6226\n1365",
        "| 4582 | 5105 | 3556 | 5580 |",
        "4417\t4381\t5678\t0380",
        "Steps: 5475; 9315; 6672; 5892",
        "ports 5464,6581,3464,1193",
    ],
)
def test_numbers_with_other_separators_are_not_cards(text: str) -> None:
    assert find_sensitive(text) == []


# ------------------------------------------------------------------------------------------ ids, not cards
@pytest.mark.parametrize(
    "text",
    [
        f"Employee number {VISA} starts Monday.",
        f"employee #{groups(VISA, ' ')}",
        f"The employee number for Dana is {groups(MC, ' ')}.",
        f"Pay slip for employee no. {VISA} is attached.",
        f"SKU {MC} is out of stock.",
        f"Item SKU: {groups(MC, '-')} (pay at the till)",
        f"Member number {VISA} renews in May.",
        f"Customer number {VISA} moved to Leeds.",
        f"Part no. {MC} fits the 2019 model.",
        f"Order #{VISA} shipped",
        f"Tracking number {groups(VISA, '-')}.",
        "Part number 123-45-6789 replaces the old hinge.",
        "SKU 078-05-1121 ships in a box of ten.",
        "Catalogue item 219-09-9998 is discontinued.",
        "Model 512-34-5678 is the newer pump.",
        "Order AB123456C was split into two parcels.",
        f"Policy no. {VISA} covers the house.",
        f"Claim number {VISA} was approved.",
        f"Container {VISA} arrived at the port.",
        f"Stock number {groups(MC, '-')}",
        "Lot no. 765-43-2109 passed QA.",  # "passed" holds "ss" but is no word about social security
        "P/N 987-65-4321 fits both models.",
    ],
)
def test_numbers_labelled_as_ids_are_allowed(text: str) -> None:
    assert find_sensitive(text) == []
    check_write(text, Source.USER)


@pytest.mark.parametrize(
    ("before", "value", "after", "kind"),
    [
        ("Order 5521 was paid with card ", groups(VISA, " "), "", "card"),
        ("Order #77 card: ", VISA, " exp 09/28", "card"),
        ("Invoice paid, visa ", groups(MC, "."), ".", "card"),
        ("employee SSN ", "123-45-6789", "", "ssn"),
        ("part 7 of my social security number: ", "078-05-1120", "", "ssn"),
        ("NINO ", "AB123456C", "", "national_id"),
    ],
)
def test_an_id_label_does_not_hide_a_real_value(before: str, value: str, after: str, kind: str) -> None:
    assert_refused_and_masked(before, value, after, kind)
