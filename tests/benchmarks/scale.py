"""Scale benchmark (issue 4): many memories over many users in embedded Chroma.

Generates ``--memories`` seeded memories over ``--users`` users (short facts and notes, medium notes and long
events, 5-60 words, drawn from a vocabulary of several thousand words, grouped in sessions), stores them
in ``Memory(path=<tmpdir>)`` through the public API, and reports, each against a peer measured in the same run:

* recall latency (median, p95) of memtend against a raw Chroma query with the same ``user_id`` filter and the
  same embedding model, for one warm user, and over a sample of users (cold: first query after the user's
  index was evicted; warm: the next one). Target: warm p95 <= 1.5x raw Chroma p95.
* ingest throughput through the public API (``log_many`` per user in batches, plus single ``remember`` calls)
  against the embedding model's own throughput on the same texts in the same batches, timed interleaved.
  Target: >= 80%.
* memory: RSS (psutil) and Python heap (tracemalloc) after touching 10%, 50% and 100% of the users; it must
  plateau because the index cache is bounded (``max_cached_users``); index bytes per user.
* incremental index: a write then a recall on a warm user loads no index and stays at warm latency.

    uv run python tests/benchmarks/scale.py [--memories 100000] [--users 1000] [--queries 200] [--seed 0]

``run(memories, users, queries, seed)`` returns the numbers as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from memtend import memory as memory_module
from memtend.embeddings import default_embedding_function
from memtend.memory import Event, Memory

K = 10
INGEST_TARGET = 0.80  # memtend ingest throughput / embedding model throughput
RECALL_TARGET = 1.5  # memtend warm recall p95 / raw Chroma query p95
CYCLE_TARGET = 1.5  # recall right after a write, median / warm recall median
PLATEAU_TARGET = 0.10  # RSS growth from 10% to 100% of users touched / what unbounded indexes would add
SINGLE_SHARE = 0.02  # share of memories written with single ``remember`` calls

# ---------------------------------------------------------------------------------------------------------------
# Text generation: varied, seeded, realistic lengths. No digits runs that look like cards, ids or secrets.

FIRST_NAMES = """
Aaliyah Abdul Ada Adrian Aiko Alba Alejandro Amara Anders Ananya Andrei Anika Arjun Astrid Aurelio Ayesha
Barbara Bastian Beatriz Benedikt Bianca Bogdan Bruno Camila Carmen Cedric Chiara Chidi Chloe Cosmin Dalia
Damian Dario Deepa Desmond Dmitri Elena Elif Emeka Emil Esther Fabian Farah Fatima Felix Fiona Florin
Freya Gabriel Gemma Giorgio Greta Hana Hamid Hannah Hector Helga Hiro Ibrahim Ilse Imani Ingrid Isaac Ivan
Jamal Janek Javier Jonas Jorge Julia Kai Kamala Karim Katya Kenji Kofi Lars Layla Leila Lena Liam Lorenzo
Lucia Luka Magnus Malik Mara Marek Mateo Maya Mehmet Mila Milan Mina Nadia Naveen Nia Nikolai Noor Olga
Omar Oskar Paloma Pavel Petra Priya Rafael Rania Ravi Rosa Ruben Sakura Samir Sanna Santiago Selin Sergei
Sofia Soren Tariq Teodora Thiago Tomas Uma Valentina Vera Viktor Wei Yara Yusuf Zainab Zoran Zuzana
""".split()

PLACES = """
Lisbon Porto Madrid Seville Valencia Barcelona Marseille Lyon Paris Bordeaux Brussels Antwerp Ghent Utrecht
Amsterdam Rotterdam Hamburg Berlin Leipzig Dresden Munich Vienna Salzburg Graz Zurich Geneva Basel Milan Turin
Bologna Florence Naples Palermo Ljubljana Zagreb Split Belgrade Sarajevo Budapest Bratislava Prague Brno
Krakow Warsaw Gdansk Vilnius Riga Tallinn Helsinki Stockholm Gothenburg Oslo Bergen Copenhagen Aarhus Dublin
Cork Galway Edinburgh Glasgow Manchester Leeds Bristol Cardiff Reykjavik Athens Thessaloniki Istanbul Izmir
Bucharest Cluj Sofia Plovdiv Tbilisi Yerevan Cairo Marrakesh Tunis Nairobi Accra Lagos Montreal Toronto
Vancouver Chicago Boston Seattle Denver Austin Oaxaca Lima Cusco Santiago Valparaiso Bogota Medellin Kyoto
Osaka Sapporo Busan Taipei Hanoi Bangkok Chiang Penang Jakarta Bali Manila Melbourne Hobart Auckland
""".split()

ACTIVITIES = """
running cycling swimming climbing bouldering hiking kayaking sailing surfing skiing snowboarding skating
rowing fencing archery judo karate yoga pilates boxing badminton tennis squash volleyball basketball
football cricket baseball golf chess poker knitting crochet embroidery quilting pottery woodworking welding
carving painting sketching calligraphy photography birdwatching stargazing gardening beekeeping foraging
fishing baking brewing fermenting pickling composting journaling blogging podcasting coding soldering
drumming singing songwriting composing dancing salsa tango flamenco theatre improv puppetry origami
juggling magic cosplay gaming speedrunning modding volunteering tutoring mentoring translating birding
geocaching orienteering canyoning paragliding caving snorkeling diving triathlon marathon parkour
""".split()

FOODS = """
ramen sushi tempura udon soba gyoza dumplings noodles risotto lasagne gnocchi ravioli polenta focaccia
pizza tapas paella gazpacho tortilla churros croissants baguette crepes ratatouille bouillabaisse fondue
raclette schnitzel pretzels strudel goulash pierogi borscht blini pelmeni khachapuri baklava hummus falafel
shakshuka tagine couscous injera jollof biryani curry dosa paneer samosa naan pho banh laksa rendang satay
kimchi bibimbap bulgogi tacos burritos enchiladas ceviche empanadas arepas feijoada brigadeiro pancakes
waffles granola porridge smoothies kombucha espresso matcha chai sourdough bagels pastrami brisket
chowder oysters mussels scallops salmon mackerel sardines lentils chickpeas tofu tempeh seitan quinoa
avocado mango papaya pomegranate figs apricots cherries blueberries rhubarb asparagus artichokes fennel
""".split()

OBJECTS = """
laptop keyboard monitor headphones microphone camera lens tripod drone bicycle helmet backpack tent sleeping
stove lantern compass kettle teapot blender toaster grinder espresso notebook planner calendar fountain pen
pencil easel canvas brushes sewing machine loom kiln wheel chisel saw drill router printer scanner tablet
phone charger speaker turntable vinyl guitar violin cello piano ukulele trumpet saxophone flute harmonica
accordion synthesizer amplifier pedalboard metronome telescope binoculars microscope aquarium terrarium
bonsai orchid cactus fern herb planter greenhouse shed garage attic balcony patio hammock sofa armchair
bookshelf wardrobe mattress pillow blanket rug curtains lamp chandelier mirror clock watch wallet umbrella
scarf gloves boots sneakers sandals jacket raincoat sweater hoodie suit dress passport ticket suitcase
""".split()

WORK = """
migration deployment rollout refactor audit budget forecast roadmap launch review interview onboarding
offboarding contract invoice proposal pitch workshop hackathon retrospective standup sprint backlog
prototype benchmark dashboard pipeline warehouse schema database cluster outage incident postmortem
escalation compliance certification license patent trademark lawsuit settlement merger acquisition
partnership sponsorship grant fellowship thesis dissertation manuscript article newsletter podcast webinar
conference keynote panel poster curriculum syllabus lecture seminar exam grading admissions scholarship
internship apprenticeship promotion raise relocation sabbatical resignation retirement pension mortgage
renovation lease tenancy insurance warranty subscription membership donation fundraiser campaign election
""".split()

ADJECTIVES = """
quiet noisy bright gloomy cozy spacious cramped tidy messy elegant rustic modern vintage sturdy fragile
expensive cheap affordable generous stingy punctual late early careful reckless patient impatient curious
cautious adventurous lazy energetic tired exhausted relaxed anxious nervous excited thrilled disappointed
frustrated grateful proud embarrassed confused surprised delighted bored lonely cheerful grumpy stubborn
flexible strict lenient formal casual spicy bland sweet sour bitter salty crunchy creamy smoky fresh stale
ripe frozen roasted grilled steamed fried slow quick smooth bumpy steep flat windy rainy sunny foggy humid
chilly freezing scorching muddy dusty snowy icy remote crowded deserted historic scenic hidden famous
""".split()

VERBS = """
visited booked cancelled rescheduled finished started abandoned resumed repaired broke replaced borrowed
lent returned bought sold ordered shipped received unpacked assembled painted cleaned organized sorted
packed moved renovated decorated planted harvested pruned watered baked cooked grilled tasted brewed
tried learned practiced taught studied read wrote edited published recorded filmed photographed sketched
designed built tested debugged deployed migrated reviewed approved rejected negotiated signed drafted
submitted presented rehearsed performed organised hosted attended skipped missed joined left quit
""".split()

RELATIONS = """
sister brother mother father cousin aunt uncle grandmother grandfather niece nephew daughter son partner
wife husband roommate neighbour colleague manager mentor coach teacher landlord dentist doctor therapist
plumber electrician accountant lawyer vet trainer barber
""".split()

FEELINGS = "loved hated enjoyed disliked appreciated regretted missed dreaded adored tolerated".split()
TIMES = """
yesterday today tonight this morning | last weekend | last week | on Monday | on Tuesday | on Wednesday |
on Thursday | on Friday | on Saturday | on Sunday | in January | in February | in March | in April | in May |
in June | in July | in August | in September | in October | in November | in December | two days ago |
a few weeks ago | last month | over the holidays | after work | before lunch | at dawn | late at night
""".replace("\n", " ")
TIME_PHRASES = [t.strip() for t in TIMES.split("|") if t.strip()]

# Made-up but pronounceable words (project codenames, pets, streets, dishes): a long tail for BM25.
SYLLABLES = "ka lo mi ra ven tor sel da nu fi bri zan gol pe qua rix tam ol ur ash ind mer cor vy lu".split()


def _coined(rng: random.Random, count: int) -> list[str]:
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize())
    return sorted(words)


@dataclass
class Persona:
    """What one user's memories are about: a few people, places, hobbies, foods, things, projects."""

    name: str
    people: list[tuple[str, str]]  # (relation, name)
    places: list[str]
    activities: list[str]
    foods: list[str]
    objects: list[str]
    work: list[str]
    projects: list[str]
    pets: list[str]


@dataclass
class Item:
    """One generated memory: its text, when it happened, its session, and how it is written."""

    text: str
    at: float
    session: str
    single: bool = False  # written with ``remember`` instead of ``log_many``


@dataclass
class Corpus:
    users: list[str]
    items: dict[str, list[Item]]
    personas: dict[str, Persona]
    queries: dict[str, list[str]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.items.values())


def _persona(rng: random.Random, coined: list[str]) -> Persona:
    return Persona(
        name=rng.choice(FIRST_NAMES),
        people=[(rng.choice(RELATIONS), rng.choice(FIRST_NAMES)) for _ in range(rng.randint(3, 6))],
        places=rng.sample(PLACES, rng.randint(3, 7)),
        activities=rng.sample(ACTIVITIES, rng.randint(3, 6)),
        foods=rng.sample(FOODS, rng.randint(3, 7)),
        objects=rng.sample(OBJECTS, rng.randint(4, 8)),
        work=rng.sample(WORK, rng.randint(3, 6)),
        projects=rng.sample(coined, rng.randint(1, 3)),
        pets=rng.sample(coined, rng.randint(0, 2)),
    )


def _short(rng: random.Random, p: Persona) -> str:
    """A short fact or preference, about 5-12 words."""
    rel, who = rng.choice(p.people)
    options = [
        f"My {rel} {who} lives in {rng.choice(p.places)} now.",
        f"I prefer {rng.choice(ADJECTIVES)} {rng.choice(p.foods)} over {rng.choice(FOODS)} most days.",
        f"I am allergic to {rng.choice(FOODS)} and {rng.choice(FOODS)}.",
        f"My favourite hobby lately is {rng.choice(p.activities)} with {who}.",
        f"Remind me to call {who} about the {rng.choice(p.work)}.",
        f"The {rng.choice(p.objects)} in the {rng.choice(OBJECTS)} needs replacing soon.",
        f"Project {rng.choice(p.projects)} uses the {rng.choice(p.objects)} as a mascot, oddly enough.",
        f"I {rng.choice(FEELINGS)} the {rng.choice(ADJECTIVES)} {rng.choice(FOODS)} in {rng.choice(p.places)}.",
        f"{who} recommended {rng.choice(ACTIVITIES)} classes near {rng.choice(p.places)} station.",
        f"Dietary note: no {rng.choice(FOODS)}, extra {rng.choice(FOODS)} please.",
    ]
    if p.pets:
        options.append(f"Our {rng.choice(['dog', 'cat', 'parrot', 'rabbit'])} {rng.choice(p.pets)} hates the vet.")
    return rng.choice(options)


def _clause(rng: random.Random, p: Persona) -> str:
    rel, who = rng.choice(p.people)
    options = [
        f"I {rng.choice(VERBS)} the {rng.choice(ADJECTIVES)} {rng.choice(p.objects)} with my {rel} {who}",
        f"we went {rng.choice(p.activities)} near {rng.choice(p.places)} and it was {rng.choice(ADJECTIVES)}",
        f"{who} {rng.choice(VERBS)} the {rng.choice(p.work)} for project {rng.choice(p.projects)}",
        f"the {rng.choice(p.work)} meeting ran {rng.choice(['long', 'short', 'late', 'over'])} because of the "
        f"{rng.choice(WORK)}",
        f"dinner was {rng.choice(ADJECTIVES)} {rng.choice(p.foods)} followed by {rng.choice(FOODS)}",
        f"I {rng.choice(FEELINGS)} how {rng.choice(ADJECTIVES)} the weather in {rng.choice(p.places)} was",
        f"my {rel} asked whether the {rng.choice(OBJECTS)} could fit in the {rng.choice(p.objects)}",
        f"the {rng.choice(ADJECTIVES)} {rng.choice(['train', 'flight', 'ferry', 'bus'])} to "
        f"{rng.choice(PLACES)} was {rng.choice(ADJECTIVES)}",
        f"I practiced {rng.choice(p.activities)} for {rng.randint(2, 9)} hours and felt {rng.choice(ADJECTIVES)}",
        f"{who} {rng.choice(FEELINGS)} the {rng.choice(ADJECTIVES)} {rng.choice(OBJECTS)} I {rng.choice(VERBS)}",
    ]
    return rng.choice(options)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(rng: random.Random, clauses: list[str]) -> str:
    text = clauses[0]
    for clause in clauses[1:]:
        text += rng.choice([", and ", "; then ", ". Also, ", ", but ", " while "]) + clause
    return text + "."


def _medium(rng: random.Random, p: Persona) -> str:
    """A note, about 12-30 words."""
    return _cap(rng.choice(TIME_PHRASES)) + ", " + _join(rng, [_clause(rng, p) for _ in range(rng.randint(1, 2))])


def _long(rng: random.Random, p: Persona) -> str:
    """An event with some detail, about 30-60 words."""
    head = f"{_cap(rng.choice(TIME_PHRASES))} in {rng.choice(p.places)}: "
    return head + _cap(_join(rng, [_clause(rng, p) for _ in range(rng.randint(3, 5))]))


def _clip(text: str, rng: random.Random, low: int = 5, high: int = 60) -> str:
    words = text.split()
    if len(words) > high:
        words = words[: rng.randint(high - 10, high)]
        return " ".join(words).rstrip(",;.") + "."
    return text if len(words) >= low else text + " Worth remembering."


def _query(rng: random.Random, p: Persona, source: str) -> str:
    """A question about a user's memories: words of one of them, phrased as an agent would ask."""
    rel, who = rng.choice(p.people)
    words = [w.strip(".,;:") for w in source.split() if len(w.strip(".,;:")) > 4]
    picked = " ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))) if words else who
    templates = [
        f"What do I know about {picked}?",
        f"When did I last mention {picked}?",
        f"What did {who} say about {rng.choice(p.work)}?",
        f"Where does my {rel} live?",
        f"Which foods should I avoid, like {rng.choice(p.foods)}?",
        f"Anything about {rng.choice(p.activities)} in {rng.choice(p.places)}?",
        f"Tell me about {picked} and {rng.choice(p.objects)}",
        f"How is project {rng.choice(p.projects)} going?",
    ]
    return rng.choice(templates)


def generate(memories: int, users: int, queries: int, seed: int) -> Corpus:
    """``memories`` texts over ``users`` users (as even as possible), in sessions, a year of timestamps."""
    rng = random.Random(seed)
    coined = _coined(rng, 3_000)
    start = 1_700_000_000.0
    year = 365 * 86_400.0
    user_ids = [f"user-{i:05d}" for i in range(users)]
    per_user = [memories // users + (1 if i < memories % users else 0) for i in range(users)]
    items: dict[str, list[Item]] = {}
    personas: dict[str, Persona] = {}
    for uid, n in zip(user_ids, per_user, strict=True):
        p = personas[uid] = _persona(rng, coined)
        times = sorted(start + rng.random() * year for _ in range(n))
        session, session_left = "", 0
        user_items = []
        for at in times:
            if session_left == 0:
                session, session_left = f"s{rng.randrange(10**6):06d}", rng.randint(4, 20)
            session_left -= 1
            roll = rng.random()
            text = _short(rng, p) if roll < 0.35 else _medium(rng, p) if roll < 0.75 else _long(rng, p)
            user_items.append(Item(_clip(text, rng), at, session, single=rng.random() < SINGLE_SHARE))
        items[uid] = user_items
    corpus = Corpus(users=user_ids, items=items, personas=personas)
    for uid in user_ids:
        pool = items[uid] or [Item(personas[uid].name, start, "")]
        corpus.queries[uid] = [_query(rng, personas[uid], rng.choice(pool).text) for _ in range(max(queries, 4))]
    return corpus
