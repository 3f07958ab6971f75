"""The subject of a statement apart from its value (pure text functions behind changes said in other words)."""

from __future__ import annotations

import pytest
from memtend_conflicts.subject import (
    PLACEHOLDER,
    about_another_thing,
    adds_to,
    masked_subject,
    not_yet_or_long_ago,
    only_begins,
    reports_an_act,
    speaks_of_the_user,
    tells_an_occasion,
    value_kinds,
)

X = PLACEHOLDER


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("I live in Paris.", f"I live in {X}."),
        ("I moved to Berlin last month.", f"I moved to {X} last month."),
        ("My manager is Priya.", f"My manager is {X}."),
        ("Reporting to Marcus after the reorg.", f"Reporting to {X} after the reorg."),
        # numbers with what is glued to them, and a spelled number
        ("I take 10mg of lisinopril daily.", f"I take {X} of lisinopril daily."),
        ("My shift starts at 7am.", f"My shift starts at {X}."),
        ("Up to twelve thousand steps.", f"Up to {X} steps."),
        ("New mobile: 07911 554433.", f"New mobile: {X}."),
        # addresses and handles
        ("My email is jo.barnes@gmail.com.", f"My email is {X}."),
        ("I go by @dkowalski on chat.", f"I go by {X} on chat."),
        # days, months, times of day
        ("Piano lessons are on Tuesday evenings.", f"Piano lessons are on {X}."),
        # a run of names is one value; "I" is never a name
        ("I fly British Airways.", f"I fly {X}."),
        # brand-shaped words at a sentence's start, and a one-word value closing "is/am"
        ("ThinkPad is my laptop.", f"{X} is my laptop."),
        ("I'm vegetarian.", f"I'm {X}."),
        # a speaker label is left out
        ("Dana: I use Android.", f"I use {X}."),
    ],
)
def test_values_are_masked_and_the_subject_kept(text: str, masked: str) -> None:
    assert masked_subject(text) == masked


def test_ordinary_capitalised_sentence_openers_are_kept() -> None:
    assert masked_subject("Bins are collected on Wednesdays.") == f"Bins are collected on {X}."
    assert masked_subject("Home is Lyon.") == f"Home is {X}."
    assert masked_subject("Cycling to the office now.") == "Cycling to the office now."


def test_two_statements_of_one_subject_mask_alike() -> None:
    assert masked_subject("My GP is Dr Okafor.") == masked_subject("My GP is Dr Lindqvist.")
    assert masked_subject("The board meeting is on 4 March.") == masked_subject("The board meeting is on 18 June.")


@pytest.mark.parametrize(
    "text",
    [
        "Might go fully remote next year.",
        "Thinking about relocating to Montreal one day.",
        "We may try a boarding kennel over Christmas.",
        "I'd love to learn Japanese someday.",
        "Back in 2016 we ran everything on Oracle.",
        "Two summers ago we went to Iceland.",
        "When I was a student I put 350 into index funds.",
        "If Octopus offered a better tariff, I'd consider switching.",  # a condition
        "We would switch to fibre if it reached our street.",
        "Been a Gunners fan since I was six.",  # held since long ago: no recent change
        "Current account's with Barclays, have had it since uni.",
        "If book club ever moved to Thursdays I couldn't make it.",  # a condition, however it ends
    ],
)
def test_plans_and_long_past_times_are_not_current(text: str) -> None:
    assert not_yet_or_long_ago(text)


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Berlin last month.",
        "The deadline moved to May 20.",  # a month, not a maybe
        "Relocated to Montreal in May.",
        "Got engaged to Leo in August!",
    ],
)
def test_current_changes_are_current(text: str) -> None:
    assert not not_yet_or_long_ago(text)


def test_a_statement_opening_on_another_thing_that_never_refers_back() -> None:
    assert about_another_thing("The canteen now opens at 10pm for the night crew.")
    assert about_another_thing("A new café opened on the corner.")
    assert not about_another_thing("The council now empties them on Fridays.")  # refers back
    assert not about_another_thing("The teacher shifted us to Saturday mornings.")  # speaks of the user
    assert not about_another_thing("Relocated to Montreal in the spring.")  # no subject of its own
    # what others report is not the user's own thing, however it opens
    assert about_another_thing("Rates for new fixes are around 4.4% according to the news.")
    assert about_another_thing("I read that Octopus now offers the cheapest tariff.")
    assert not about_another_thing("I read mostly on the train these days.")
    # in another language: an article opening, and no word of the user or of a change
    assert about_another_thing("Il numero dell'ufficio è 02 4455 6677.")
    assert about_another_thing("Die Kantine öffnet um 10.")
    assert not about_another_thing("La mia banca è ING.")
    assert not about_another_thing("El gimnasio lo dejé, ahora nado.")  # the subject left out is the user


def test_acts_that_end_a_state_and_values_added_beside_one() -> None:
    assert reports_an_act("Traded it in for an electric Kia last weekend.")
    assert reports_an_act("Rebooked the check-up for the 20th.")
    assert reports_an_act("Signed up for the Berlin marathon.")
    assert not reports_an_act("I like the Berlin marathon.")
    assert adds_to("Turns out I'm allergic to shellfish as well.")
    assert adds_to("Now I swim on Wednesday mornings too.")
    assert adds_to("We adopted a second cat, Tofu.")
    assert not adds_to("The gym got too expensive, so I cancelled.")  # "too" before a word is not "as well"
    assert not adds_to("I moved to Berlin last month.")
    assert adds_to("Opened a Monzo account just for holiday spending.")  # for one purpose, beside the older
    assert adds_to("Bought a few pouches of tuna as a treat.")
    assert not adds_to("Knee surgery means swimming only for now.")  # a change, for now


@pytest.mark.parametrize(
    "text",
    [
        "Cooked a roast chicken for my in-laws on Sunday.",
        "We adopted a kitten, Pepper, last week.",
        "Last night I only got four hours because of the storm.",
        "On holiday in Amsterdam we cycled everywhere.",
        "Ran the Berlin marathon as a relay in 2018.",
        "Went to a spin class once and hated it.",
        "Our old landlord in Leeds never returned the deposit.",
        "Book club picked a Murakami novel for next month.",
        "At camp the bedtime was ten o'clock.",  # how things were
    ],
)
def test_one_occasion_is_told(text: str) -> None:
    assert tells_an_occasion(text)


@pytest.mark.parametrize(
    "text",
    [
        "Credentials live in Bitwarden.",
        "Cycling to the office every day.",
        "Food gets delivered from Ocado on Sunday evenings.",  # days in the plural: a habit
        "Counselling sessions are with Maya Ortiz every other Monday.",
        "We swim once a week.",
    ],
)
def test_how_things_stand_is_no_occasion(text: str) -> None:
    assert not tells_an_occasion(text)


def test_a_move_into_another_state_or_the_end_of_the_older_is_an_act() -> None:
    assert reports_an_act("Consolidated both pensions into one SIPP.")
    assert reports_an_act("Remortgaged onto a tracker, 4.3% at the moment.")
    assert reports_an_act("Went back to paper books.") and reports_an_act("Switched over to decaf.")
    assert reports_an_act("The old laptop is gone; the new one is a Framework.")
    assert reports_an_act("After the old dog passed away we adopted a cat.")
    assert not reports_an_act("Popped into the Co-op for milk.")  # a visit: nothing moved into
    assert not reports_an_act("Walked into town on Saturday.")


def test_more_acts_that_end_a_state() -> None:
    assert reports_an_act("Signed the lease on a two-bedroom by the canal.")
    assert reports_an_act("Gave the e-reader away; paper books only.")
    assert reports_an_act("Ditched the gym for running.")
    assert not reports_an_act("The lease is long.")


def test_who_a_statement_speaks_of() -> None:
    assert speaks_of_the_user("I've joined a climbing wall instead.")
    assert speaks_of_the_user("Finished it, onto a Murakami novel.")  # refers back
    assert speaks_of_the_user("Relocated to Montreal in the spring.")  # a note's verb with no subject
    assert not speaks_of_the_user("Chess club is hosted by Jonas from now on.")
    assert not speaks_of_the_user("Marketing shifted their review to Thursday.")
    assert speaks_of_the_user("Reporting to Daniel since the reorganisation.")  # a note on what the user is doing
    assert speaks_of_the_user("Commuting by bicycle since spring.")
    assert speaks_of_the_user("Just accepted an offer from a startup.")
    assert not speaks_of_the_user("Everything streams through a Fire Stick now.")  # a noun in -ing
    assert not speaks_of_the_user("IT rolled out new badges for the building.")  # the department, not "it"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("My password manager is LastPass.", {"name"}),
        ("Credentials live in Bitwarden.", {"name"}),
        ("I take the 7:40 train.", {"number"}),
        ("On-call for me is Fridays going forward.", {"time"}),
        ("My shift starts at 7am on Mondays.", {"number", "time"}),
        ("Email me at jo@example.com.", {"address"}),
        ("I commute by train.", set()),
        ("Breakfast is porridge with honey.", set()),  # an ordinary sentence opener is no name
    ],
)
def test_the_kinds_of_value_a_statement_holds(text: str, kinds: set[str]) -> None:
    assert value_kinds(text) == kinds


def test_a_beginning_with_no_word_that_ends_or_replaces() -> None:
    assert only_begins("Opened an ISA with Vanguard this spring.")
    assert only_begins("Joined the parkrun marshal rota this month.")
    assert not only_begins("Closed my Northbank account and opened one at Lakeside Credit.")  # ends one
    assert not only_begins("I started a new job at Initech in March.")  # a new one
    assert not only_begins("Quit the choir; I sing with a jazz band now.")  # no beginning at all
