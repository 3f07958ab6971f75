"""Cues of a change, and of the look-alikes beside it, said in languages other than English (``conflict_cues``), and
how the conflict rules of ``conflict_subject`` read them."""

from __future__ import annotations

import pytest
from memtend_conflicts import subject as S
from memtend_conflicts.cues import cues_of
from memtend_conflicts.reading import reads_english


@pytest.mark.parametrize(
    "text",
    [
        "Bin letzten Monat nach Berlin gezogen.",
        "Morgens gibt es bei mir nur noch Kaffee.",
        "Seit Oktober bin ich bei einem Start-up in Hamburg angestellt.",
        "Je vais désormais chez le Dr Leroy.",
        "Je ne bois plus de café.",
        "Ahora trabajo en una escuela como profesora.",
        "Ya no fumo.",
        "Sono passato a un iPhone.",
        "Non guido più la macchina.",
        "Mudei-me para o Porto no mês passado.",
        "We zijn overgestapt naar Vattenfall.",
        "Numera dricker jag kaffe på morgonen.",
        "Teraz chodzę do dr Kowalskiej.",
        "Geçen ay İzmir'e taşındım.",
        "Теперь я преподаю в школе.",
        "Мы с семьёй перебрались в Казань.",
        "Múlt hónapban Debrecenbe költöztem.",
        "Sekarang saya mengajar di sekolah.",
        "先月、大阪に引っ越しました。",
        "我辞职了，现在在一所大学教书。",
        "작년에 부산으로 이사했어요.",
        "Τώρα διδάσκω σε σχολείο.",
        # a move said of something else, a plan called off, a place joined
        "A loja mudou-se para o centro comercial.",
        "La clínica se trasladó a la calle Mayor.",
        "Il viaggio a Roma? Ho annullato la prenotazione.",
        "Die Reise nach Wien wurde abgesagt.",
        "J'ai rejoint une agence de design à Nantes.",
        "Zrušil jsem předplatné posilovny.",
        "Rezervasyonu iptal ettim, otobüsle gidiyorum.",
        "Я отменил поездку в Сочи.",
        "旅行はキャンセルしました。",
    ],
)
def test_a_change_said_in_another_language_is_read_as_one(text: str) -> None:
    assert "change" in cues_of(text)
    assert S.reports_an_act(text)  # the conflict rules read it as a change cue


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Ich arbeite auch nebenbei als Übersetzer.", "adds"),
        ("J'ai aussi une ligne Free pour la tablette.", "adds"),
        ("Además de correr, juego al pádel los jueves.", "adds"),
        ("Ho anche un dermatologo, la dottoressa Ferri.", "adds"),
        ("Ещё у меня есть рабочий айфон.", "adds"),
        ("我还有一部苹果手机，专门工作用。", "adds"),
        ("Ich würde gern irgendwann einen Tesla fahren.", "plan"),
        ("Estou pensando em me mudar para Belo Horizonte.", "plan"),
        ("Kiedyś chciałabym otworzyć własne biuro rachunkowe.", "plan"),
        ("我打算以后去大学教书。", "plan"),
        ("いつか自転車で通勤したいです。", "plan"),
        ("Mes parents habitent à Nantes depuis toujours.", "long_ago"),
        ("De niña vivía en Cádiz.", "long_ago"),
        ("Gestern habe ich im Café einen Cappuccino getrunken.", "occasion"),
        ("Vorige week had ik een sollicitatiegesprek in Arnhem.", "occasion"),
        ("W zeszłym roku byłem na wakacjach pod Gdańskiem.", "occasion"),
        ("Вчера в гостях пил зелёный чай.", "occasion"),
        ("昨日は旅館で緑茶を飲みました。", "occasion"),
    ],
)
def test_look_alikes_said_in_another_language_are_told_apart(text: str, kind: str) -> None:
    cues = cues_of(text)
    assert kind in cues and "change" not in cues
    told = {"adds": S.adds_to, "plan": S.not_yet_or_long_ago, "long_ago": S.not_yet_or_long_ago}
    assert told.get(kind, S.tells_an_occasion)(text)


def test_since_long_ago_is_no_change_and_long_ago_beside_now_is_one() -> None:
    assert "change" in cues_of("Desde marzo vivo en Valencia.")
    assert "change" not in cues_of("Vivo en Valencia desde siempre.")
    assert cues_of("Früher habe ich geraucht, jetzt nicht mehr.") >= {"change"}
    assert "long_ago" not in cues_of("Früher habe ich geraucht, jetzt nicht mehr.")
    assert "change" not in cues_of("Acum cinci ani locuiam la Cluj.")  # "acum ... ani": years ago, not "now"
    assert "change" in cues_of("Пользуюсь айфоном с прошлой зимы.")  # since last winter
    assert "change" not in cues_of("Ich spiele seit Jahren Tennis.")  # for years: nothing changed lately
    assert "change" not in cues_of("Je joue au tennis depuis des années.")


def test_a_plan_called_off_is_a_change_unless_of_one_occasion() -> None:
    assert "change" in cues_of("Ho annullato l'abbonamento in palestra.")
    assert "change" in cues_of("Den Kurs habe ich abgesagt, zu teuer.")
    assert "change" not in cues_of("Exceptionnellement, la réunion de demain est annulée.")  # that one only
    assert "change" not in cues_of("Gestern wurde das Training abgesagt.")
    assert "cancel" not in cues_of("Ho annullato l'abbonamento in palestra.")  # read as a change, not a kind


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Berlin last month.",
        "My sister moved to Berlin.",
        "Reads the NYT on Sundays.",
        "Pure cotton sheets only.",
        "Buy my trainers in EU 42, the wide fit.",
        "Ben started at St Mary's after half term.",
        "The hoop earrings were a gift.",
        "Takes the plane to Dublin.",
        "My dentist is Dr Nowak.",
        "Our youngest, Mia, started nursery this week.",
        "The flight was cancelled and I rejoined the queue.",
        "Integrated the new intern into the team.",
        "Cancelled the gym, joined a climbing wall instead.",
    ],
)
def test_english_text_holds_no_cue_of_another_language(text: str) -> None:
    assert cues_of(text) <= {"first_person"} and not cues_of(text) - {"first_person"}
    assert "change" not in cues_of(text) and "adds" not in cues_of(text)


def test_the_user_speaking_without_a_pronoun_is_the_user() -> None:
    assert S.speaks_of_the_user("Ahora trabajo en una escuela como profesora.")  # the subject left out
    assert S.speaks_of_the_user("Teraz chodzę do dr Kowalskiej.")
    assert not S.speaks_of_the_user("Naapurini kulkee kaikkialle pyörällä.")  # somebody else
    assert not S.speaks_of_the_user("Kız kardeşim İzmir'e taşındı.")


def test_a_few_english_looking_words_in_another_language_do_not_read_as_english() -> None:
    assert not reads_english("Vorige week had ik een sollicitatiegesprek in Arnhem.")
    assert not reads_english("Ich wohne in Köln.")
    assert reads_english("I moved to Berlin last month.")
    assert reads_english("Buy my trainers in EU 42, the wide fit.")
