"""Relations named in other languages, for telling news of somebody else from a change of the user's own thing."""

from __future__ import annotations

import pytest
from memtend_conflicts.relations import relations_named
from memtend_conflicts.words import people


@pytest.mark.parametrize(
    ("text", "relation"),
    [
        ("Meine Schwester ist nach Berlin gezogen.", "sister"),
        ("Ma sœur va chez le Dr Leroy.", "sister"),
        ("Mi hermano trabaja en una escuela.", "brother"),
        ("Mia moglie ha comprato un iPhone.", "wife"),
        ("Mijn buurman fietst overal naartoe.", "neighbour"),
        ("Min sambo dricker kaffe på morgonen.", "partner"),
        ("Moja mama chodzi do dr Kowalskiej.", "mother"),
        ("Kız kardeşim İzmir'e taşındı.", "sister"),
        ("Мой брат переехал в Казань.", "brother"),
        ("Η κόρη μου ξεκίνησε πιάνο.", "daughter"),
        ("Vợ tôi làm việc ở ngân hàng.", "wife"),
        ("我的妹妹搬到了上海。", "sister"),
        ("Anakku perempuan? Tidak, teman saya pindah ke Bandung.", "friend"),
        ("Mi primo se acaba de mudar a Granada.", "cousin"),
        ("Meine Tante wohnt jetzt in Köln.", "aunt"),
        ("Mon oncle a déménagé à Lyon.", "uncle"),
        ("Мой племянник переехал в Казань.", "nephew"),
        ("我表哥搬到了上海。", "cousin"),
    ],
)
def test_a_relation_in_another_language_is_somebody_else(text: str, relation: str) -> None:
    assert relation in relations_named(text)
    assert relation in people(text)  # the conflict rules read it as a person the statement speaks of


@pytest.mark.parametrize(
    "text",
    [
        "It took a mere five minutes.",
        "The company moved to Leeds.",
        "Germans drive on the right.",
        "I have a sore throat.",
        "OTC painkillers are in the drawer.",
        "Fill the form before Friday.",
        "Be kinder to myself this year.",
        "I use the pomodoro method.",
        "The fire was ablaze by noon.",
        "Je vais désormais chez le Dr Leroy.",
        "Driving faster than the limit.",
        "Zie je morgen op kantoor.",
        "Enkel op zondag open.",
        "Seit Oktober leben meine Freundin und ich zusammen in Leipzig.",  # the user with the relation
        "Ma femme et moi avons déménagé à Lyon.",
        "Ahora trabajo en una escuela como profesora.",
    ],
)
def test_common_words_and_the_users_own_changes_name_nobody(text: str) -> None:
    assert relations_named(text) == frozenset()


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("Paid November's rent a day late.", set()),  # a month's or a day's is nobody's
        ("The dose went up at Tuesday's appointment.", set()),
        ("Tomorrow's standup is skipped.", set()),
        ("Gran's gone into a care home.", {"grandmother"}),  # "Gran" is "Grandma", one person however named
        ("Granny lives with us now.", {"grandmother"}),
        ("Sarah's moved to Leeds.", {"sarah"}),  # a name's "'s" still names somebody
    ],
)
def test_possessive_time_words_name_nobody_and_gran_is_grandma(text: str, who: set[str]) -> None:
    assert people(text) == who
