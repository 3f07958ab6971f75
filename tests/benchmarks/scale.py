"""Scale benchmark (issue 4): many memories over many users in embedded Chroma.

Generates ``--memories`` seeded memories over ``--users`` users (skewed counts per user; short facts and
notes, medium notes and long events, 5-60 words, a vocabulary of a few thousand words, in sessions), stores them
in ``Memory(path=<tmpdir>)`` through the public API, and reports, each against a peer measured in the same run:

* recall latency (median, p95) of memtend against a raw Chroma query with the same ``user_id`` filter and the
  same embedding model (on a copy of the records in a collection with Chroma's default configuration), for one
  warm user, and over a sample of users (cold: first query after the user's
  index was evicted; warm: the next one). Target: warm p95 <= 1.5x raw Chroma p95.
* ingest throughput through the public API (``log_many`` per user in batches, plus single ``remember`` calls)
  against the embedding model's own throughput on the same texts in the same batches, timed interleaved on
  every ``--peer-every``-th user. Target: >= 80%.
* memory: RSS (psutil; also after ``malloc_trim``) and Python heap (tracemalloc) after touching 10%, 50% and
  100% of the users, first with the Chroma reads of a cold index load alone (the peer: what reading every
  user costs Chroma and the allocator), then through memtend. It must plateau because the index cache is
  bounded (``max_cached_users``): growth beyond the cache filling up <= 10% of what an unbounded cache would add
  (users x ``UserIndex.nbytes()``). Index bytes per user, peak RSS.
* incremental index: a write then a recall on a warm user loads no index and stays at warm latency.
* beside the peers a user would pick instead (last, so their stores do not weigh on the memory figures): raw
  Chroma (the copy above), langchain-chroma's ``Chroma`` with a ``user_id`` filter, LlamaIndex's
  ``ChromaVectorStore`` with a ``user_id`` metadata filter, LangGraph's ``InMemoryStore`` and ``SqliteStore`` (with
  sqlite-vec) with a vector index and one namespace per user; each is given the same embedding model and filled
  (untimed) with every user's memories from memtend's stored vectors. Then, the order rotating from one user to
  the next: the first and second recall of ``--peer-users`` users memtend has not cached, ``--peer-writes`` single
  writes, and ``--peer-batches`` batches of new memories, each beside the embedding model alone on the same texts.

    uv run python tests/benchmarks/scale.py [--memories 100000] [--users 1000] [--queries 200] [--seed 0]
        [--peer-users 50] [--peer-writes 20] [--peer-batches 5]

``run(memories, users, queries, seed)`` returns the numbers as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import math
import os
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from memtend import memory as memory_module
from memtend.memory import Event, Memory
from memtend.records import Record, Status
from memtend.storage.embeddings import default_embedding_function
from memtend.storage.filters import HISTORY_ID_PREFIX

K = 10
INGEST_TARGET = 0.80  # memtend ingest throughput / embedding model throughput
RECALL_TARGET = 1.5  # memtend warm recall p95 / raw Chroma query p95
CYCLE_TARGET = 1.5  # recall right after a write, median / warm recall median
PLATEAU_TARGET = 0.10  # RSS growth from 10% to 100% of users touched, beyond the cache filling up, / what
# an unbounded cache would add (users x index bytes per user)
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


def _stored_text(got: Any, n: int) -> str:
    """The text of row ``n`` of a Chroma get of memtend's records (kept in its metadata; older rows: the document)."""
    return Record.from_chroma(got["ids"][n], got["documents"][n], dict(got["metadatas"][n] or {})).text


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

    def typical_user(self) -> str:
        """The user whose number of memories is closest to the mean (the first such)."""
        mean = self.size / len(self.users)
        return min(self.users, key=lambda uid: abs(len(self.items[uid]) - mean))


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


def _split(total: int, users: int, rng: random.Random, least: int = 5) -> list[int]:
    """Memories per user: skewed (log-normal weights, some users have several times the mean), at least
    ``least`` each (when the total allows), summing to ``total``."""
    least = min(least, total // users)
    weights = [rng.lognormvariate(0.0, 0.6) for _ in range(users)]
    spare = total - least * users
    counts = [least + int(spare * w / sum(weights)) for w in weights]
    for i in rng.sample(range(users), total - sum(counts)):
        counts[i] += 1
    return counts


def generate(memories: int, users: int, queries: int, seed: int) -> Corpus:
    """``memories`` texts over ``users`` users (skewed counts), in sessions, over a year of timestamps."""
    rng = random.Random(seed)
    coined = _coined(rng, 3_000)
    start = 1_700_000_000.0
    year = 365 * 86_400.0
    user_ids = [f"user-{i:05d}" for i in range(users)]
    per_user = _split(memories, users, rng)
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


# ---------------------------------------------------------------------------------------------------------------
# Measuring


def _percentiles(samples: list[float]) -> dict[str, float]:
    """Median, p95 and mean in milliseconds (nan when there are no samples)."""
    if not samples:
        return {"n": 0, "p50_ms": math.nan, "p95_ms": math.nan, "mean_ms": math.nan}
    arr = np.asarray(samples, dtype=np.float64) * 1e3
    return {
        "n": len(samples),
        "p50_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "mean_ms": float(arr.mean()),
    }


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """Seconds taken by ``fn(*args, **kwargs)``, and what it returned."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


@contextmanager
def _count_index_loads() -> Iterator[list[str]]:
    """Record every user index loaded from storage (``SyncedIndex.load``) while the block runs."""
    synced = memory_module.SyncedIndex
    original = synced.__dict__["load"]
    loads: list[str] = []

    def load(cls: type, storage: Any, user_id: str, config: Any, judge: Any = None) -> Any:
        loads.append(user_id)
        return original.__func__(cls, storage, user_id, config, judge)

    synced.load = classmethod(load)  # type: ignore[method-assign,assignment]
    try:
        yield loads
    finally:
        synced.load = original  # type: ignore[method-assign]


class _LoadLog:
    """The machine's load while the run goes on: the 1-minute load average every ``every`` seconds on a
    background thread, and when each phase began, so the report says how busy the shared machine was."""

    def __init__(self, every: float = 15.0) -> None:
        self.every = every
        self.samples: list[tuple[float, float]] = []  # (seconds since start, 1-minute load average)
        self.phases: list[tuple[str, float]] = []
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="scale-load", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while True:
            self.samples.append((time.perf_counter() - self.start, os.getloadavg()[0]))
            if self._stop.wait(self.every):
                return

    def phase(self, name: str) -> None:
        begun = time.perf_counter() - self.start
        self.phases.append((name, begun))
        self.samples.append((begun, os.getloadavg()[0]))  # every phase has a sample, however short

    def summary(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        self.samples.append((time.perf_counter() - self.start, os.getloadavg()[0]))
        loads = [x for _, x in self.samples]
        ends = [t for _, t in self.phases[1:]] + [math.inf]
        by_phase = {}
        for (name, begun), ended in zip(self.phases, ends, strict=True):
            inside = [x for t, x in self.samples if begun <= t <= ended]
            by_phase[name] = float(np.mean(inside)) if inside else math.nan
        return {
            "cores": os.cpu_count(),
            "load1_min": min(loads),
            "load1_mean": float(np.mean(loads)),
            "load1_max": max(loads),
            "by_phase": by_phase,
        }


class _Progress:
    def __init__(self, label: str, total: int, quiet: bool) -> None:
        self.label, self.total, self.quiet = label, total, quiet
        self.start = self.last = time.perf_counter()

    def tick(self, done: int) -> None:
        t = time.perf_counter()
        if self.quiet or (t - self.last < 15 and done < self.total):
            return
        self.last = t
        rate = done / max(t - self.start, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else math.inf
        print(f"  {self.label}: {done:,}/{self.total:,} ({t - self.start:.0f} s, eta {eta:.0f} s)", file=sys.stderr)


def _ingest(mem: Memory, corpus: Corpus, ef: Any, batch: int, peer_every: int, quiet: bool) -> dict[str, Any]:
    """Store every memory through the public API. On every ``peer_every``-th user, also time the embedding
    model on the same texts in the same batches, interleaved (order alternating), so noise hits both."""
    ids: dict[str, list[str]] = {}
    t_batch = t_single = 0.0
    n_batch = n_single = 0
    peer = {"batch_s": 0.0, "single_s": 0.0, "ingest_batch_s": 0.0, "ingest_single_s": 0.0, "batch": 0, "single": 0}
    progress = _Progress("ingest", corpus.size, quiet)
    done = 0
    for u, uid in enumerate(corpus.users):
        user = mem.user(uid)
        items = corpus.items[uid]
        sampled = u % peer_every == 0
        peer_first = (u // peer_every) % 2 == 0
        ids[uid] = []
        events = [Event(text=it.text, at=it.at, session=it.session) for it in items if not it.single]
        singles = [it for it in items if it.single]
        for start in range(0, len(events), batch):
            chunk = events[start : start + batch]
            texts = [e.text for e in chunk]
            if sampled and peer_first:
                peer["batch_s"] += _timed(ef, texts)[0]
            elapsed, records = _timed(user.log_many, chunk)
            if sampled and not peer_first:
                peer["batch_s"] += _timed(ef, texts)[0]
            t_batch += elapsed
            n_batch += len(chunk)
            ids[uid].extend(r.id for r in records)
            if sampled:
                peer["ingest_batch_s"] += elapsed
                peer["batch"] += len(chunk)
        for it in singles:
            if sampled and peer_first:
                peer["single_s"] += _timed(ef, [it.text])[0]
            elapsed, record = _timed(user.remember, it.text, session=it.session)
            if sampled and not peer_first:
                peer["single_s"] += _timed(ef, [it.text])[0]
            t_single += elapsed
            n_single += 1
            ids[uid].append(record.id)
            if sampled:
                peer["ingest_single_s"] += elapsed
                peer["single"] += 1
        done += len(items)
        progress.tick(done)
    mem.flush_usage()
    total_s = t_batch + t_single
    peer_n = peer["batch"] + peer["single"]
    peer_embed_s = peer["batch_s"] + peer["single_s"]
    peer_ingest_s = peer["ingest_batch_s"] + peer["ingest_single_s"]
    ratio = _ratio(peer_embed_s, peer_ingest_s)  # (n / ingest_s) / (n / embed_s)
    return {
        "ids": ids,
        "memories": n_batch + n_single,
        "seconds": total_s,
        "per_s": (n_batch + n_single) / total_s if total_s else math.nan,
        "log_many": {"memories": n_batch, "per_s": n_batch / t_batch if t_batch else math.nan, "batch": batch},
        "remember": {
            "memories": n_single,
            "per_s": n_single / t_single if t_single else math.nan,
            "ms_per_call": 1e3 * t_single / n_single if n_single else math.nan,
        },
        "peer": {
            "users": len(range(0, len(corpus.users), peer_every)),
            "texts": peer_n,
            "embed_per_s": peer_n / peer_embed_s if peer_embed_s else math.nan,
            "ingest_per_s": peer_n / peer_ingest_s if peer_ingest_s else math.nan,
            "log_many_ratio": _ratio(peer["batch_s"], peer["ingest_batch_s"]),
            "remember_ratio": _ratio(peer["single_s"], peer["ingest_single_s"]),
            "single_embed_ms": 1e3 * peer["single_s"] / peer["single"] if peer["single"] else math.nan,
        },
        "ratio": ratio,
        "target": INGEST_TARGET,
        "pass": bool(ratio >= INGEST_TARGET),
    }


def _check_stored(mem: Memory, corpus: Corpus, ids: dict[str, list[str]]) -> dict[str, Any]:
    col = mem.storage.memories
    records = sum(1 for i in col.get(include=[])["ids"] if not i.startswith(HISTORY_ID_PREFIX))  # not history rows
    missing_users = 0
    missing = 0
    for uid in corpus.users:
        got = set(col.get(where={"user_id": {"$eq": uid}}, include=[])["ids"])
        lost = len(set(ids[uid]) - got)
        missing += lost
        missing_users += bool(lost) or len(got) != len(corpus.items[uid])
    return {
        "expected": corpus.size,
        "returned_ids": sum(len(v) for v in ids.values()),
        "collection_count": records,
        "missing": missing,
        "users_with_mismatch": missing_users,
        "ok": missing == 0 and missing_users == 0 and records == corpus.size,
    }


@contextmanager
def _raw_chroma(mem: Memory) -> Iterator[Any]:
    """The peer's collection: the same records, vectors and metadata, in a collection with Chroma's default
    configuration (memtend builds its own collection's HNSW graph cheaply, since its recall never reads it).
    Dropped afterwards so it does not weigh on the memory measurements."""
    client = mem.storage.client
    name = f"{mem.storage.prefix}_raw_peer"
    peer = client.create_collection(name, embedding_function=None)
    try:
        offset = 0
        while True:
            got = mem.storage.memories.get(limit=5_000, offset=offset, include=["embeddings", "documents", "metadatas"])
            if not got["ids"]:
                break
            offset += len(got["ids"])
            # the records only: history rows kept beside them (ids "h:...") are not part of what the peer holds
            # (nor are rows that are no record: a row without a record's fields, such as a stored call log)
            rows = [
                n
                for n, i in enumerate(got["ids"])
                if not i.startswith(HISTORY_ID_PREFIX) and {"r", "user_id"} & set(got["metadatas"][n] or {})
            ]
            for start in range(0, len(rows), 1_000):
                part = rows[start : start + 1_000]
                peer.add(
                    ids=[got["ids"][n] for n in part],
                    embeddings=[got["embeddings"][n] for n in part],
                    documents=[_stored_text(got, n) for n in part],
                    metadatas=[got["metadatas"][n] for n in part],
                )
        yield peer
    finally:
        client.delete_collection(name)


def _raw_query(peer: Any, ef: Any, uid: str, query: str, k: int) -> int:
    """The peer: one Chroma query with the same user filter and the same embedding model."""
    got = peer.query(query_embeddings=ef([query]), n_results=k, where={"user_id": {"$eq": uid}})
    return len(got["ids"][0])


def _pair(
    mem: Memory, peer: Any, ef: Any, uid: str, query: str, k: int, memtend_first: bool
) -> tuple[float, float, int]:
    """Time one memtend recall and one raw Chroma query for the same user and question, in the given order."""
    user = mem.user(uid)
    if memtend_first:
        t_mem, hits = _timed(user.recall, query, k=k)
        t_raw, _ = _timed(_raw_query, peer, ef, uid, query, k)
    else:
        t_raw, _ = _timed(_raw_query, peer, ef, uid, query, k)
        t_mem, hits = _timed(user.recall, query, k=k)
    return t_mem, t_raw, len(hits)


def _compare(memtend_s: list[float], raw_s: list[float], target: float | None) -> dict[str, Any]:
    ours, theirs = _percentiles(memtend_s), _percentiles(raw_s)
    out: dict[str, Any] = {
        "memtend": ours,
        "chroma": theirs,
        "ratio_p50": _ratio(ours["p50_ms"], theirs["p50_ms"]),
        "ratio_p95": _ratio(ours["p95_ms"], theirs["p95_ms"]),
    }
    if target is not None:
        out["target"] = target
        out["pass"] = bool(out["ratio_p95"] <= target)
    return out


def _recall_latency(mem: Memory, corpus: Corpus, ef: Any, queries: int, rng: random.Random) -> dict[str, Any]:
    with _raw_chroma(mem) as peer:
        return _recall_latency_against(mem, peer, corpus, ef, queries, rng)


def _recall_latency_against(
    mem: Memory, peer: Any, corpus: Corpus, ef: Any, queries: int, rng: random.Random
) -> dict[str, Any]:
    one = corpus.typical_user()
    empty = 0
    # one warm user: a few untimed recalls load its index, then `queries` timed pairs
    for q in corpus.queries[one][:3]:
        mem.user(one).recall(q, k=K)
        _raw_query(peer, ef, one, q, K)
    ours, raw = [], []
    for i in range(queries):
        q = corpus.queries[one][i % len(corpus.queries[one])]
        t_mem, t_raw, n = _pair(mem, peer, ef, one, q, K, memtend_first=i % 2 == 0)
        ours.append(t_mem)
        raw.append(t_raw)
        empty += n == 0
    one_user = _compare(ours, raw, RECALL_TARGET)
    one_user["user"] = one
    one_user["records"] = len(corpus.items[one])

    # a sample of users: the first recall finds no cached index (cold), the next one does (warm)
    # a note written through the facade reads the user's index (write or merge), so ingest leaves some cached:
    # drop them, so each first recall below is a cold one
    for uid in [u for u in list(mem._indexes) if u != one]:
        mem.forget_index(uid)
    candidates = [u for u in corpus.users if u != one and u not in mem._indexes]
    sample = rng.sample(candidates, min(queries, len(candidates)))
    cold, cold_raw, warm, warm_raw = [], [], [], []
    not_cold = 0
    with _count_index_loads() as loads:
        for i, uid in enumerate(sample):
            not_cold += uid in mem._indexes
            q1, q2 = corpus.queries[uid][0], corpus.queries[uid][1]
            t_mem, t_raw, n = _pair(mem, peer, ef, uid, q1, K, memtend_first=i % 2 == 0)
            cold.append(t_mem)
            cold_raw.append(t_raw)
            empty += n == 0
            t_mem, t_raw, n = _pair(mem, peer, ef, uid, q2, K, memtend_first=i % 2 == 1)
            warm.append(t_mem)
            warm_raw.append(t_raw)
            empty += n == 0
    sample_cold = _compare(cold, cold_raw, None)
    sample_warm = _compare(warm, warm_raw, RECALL_TARGET)
    return {
        "k": K,
        "one_user": one_user,
        "sample_users": len(sample),
        "sample_cold": sample_cold,
        "sample_warm": sample_warm,
        "sample_loads": len(loads),
        "sample_not_cold": not_cold,
        "empty_results": empty,
        "queries_run": 2 * queries + 4 * len(sample),
    }


def _incremental(mem: Memory, corpus: Corpus, cycles: int, rng: random.Random) -> dict[str, Any]:
    """Write-then-recall cycles on a warm user: no index load, the same index object, recall stays warm."""
    uid = corpus.typical_user()
    user = mem.user(uid)
    questions = corpus.queries[uid]
    user.recall(questions[0], k=K)  # make sure it is cached
    index_before = mem._indexes[uid].index
    size_before = len(index_before)
    warm, after_write, writes = [], [], []
    found = 0
    p = corpus.personas[uid]
    with _count_index_loads() as loads:
        for i in range(cycles):
            warm.append(_timed(user.recall, questions[(2 * i) % len(questions)], k=K)[0])
            text = _clip(_medium(rng, p), rng)
            t_write, record = _timed(user.remember, text)
            writes.append(t_write)
            after_write.append(_timed(user.recall, questions[(2 * i + 1) % len(questions)], k=K)[0])
            # what was just written is found, through the same index
            found += record.id in {h.record.id for h in user.recall(text, k=K)}
    index_after = mem._indexes[uid].index
    w, a = _percentiles(warm), _percentiles(after_write)
    ratio = _ratio(a["p50_ms"], w["p50_ms"])
    return {
        "cycles": cycles,
        "index_loads": len(loads),
        "same_index_object": index_after is index_before,
        "index_grew_by": len(index_after) - size_before,
        "new_records_found": found,
        "warm": w,
        "after_write": a,
        "write": _percentiles(writes),
        "ratio_p50": ratio,
        "target": CYCLE_TARGET,
        "pass": bool(len(loads) == 0 and index_after is index_before and found == cycles and ratio <= CYCLE_TARGET),
    }


def _malloc_trim() -> bool:
    """Hand freed heap memory back to the OS (glibc), so RSS shows what is held, not what malloc keeps."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    libc.malloc_trim(0)
    return True


def _chroma_reads(mem: Memory, uid: str) -> None:
    """The Chroma reads of a cold index load, keeping nothing: the peer of the memory measurement."""
    mem.storage.get_records(uid, statuses=[Status.ACTIVE, Status.PENDING_REVIEW], with_embeddings=True)
    mem.storage.get_history(uid, since=time.time() - 5.0)


def _touch(mem: Memory, corpus: Corpus, checkpoints: list[int], mode: str, quiet: bool) -> dict[int, dict[str, float]]:
    """Touch each user in turn (``chroma``: its Chroma reads only; ``memtend``/``traced``: one recall, the latter
    under tracemalloc). At each checkpoint, after a GC: RSS, then RSS after ``malloc_trim``."""
    out: dict[int, dict[str, float]] = {}
    progress = _Progress(f"memory ({mode})", len(corpus.users), quiet)
    if mode == "traced":
        tracemalloc.start()
    try:
        for n, uid in enumerate(corpus.users, start=1):
            if mode == "chroma":
                _chroma_reads(mem, uid)
            else:
                mem.user(uid).recall(corpus.queries[uid][2], k=K)
            progress.tick(n)
            if n not in checkpoints:
                continue
            gc.collect()
            point: dict[str, float] = {"rss_mb": _rss_mb()}
            if mode != "chroma":
                cached = list(mem._indexes.values())
                held = sum(s.index.nbytes() for s in cached)
                point.update(
                    cached_users=len(cached),
                    index_mb=held / 2**20,
                    index_bytes_per_user=held / len(cached) if cached else 0.0,
                )
            if mode == "traced":
                current, peak = tracemalloc.get_traced_memory()
                point.update(traced_mb=current / 2**20, traced_peak_mb=peak / 2**20)
            if _malloc_trim():
                point["rss_trimmed_mb"] = _rss_mb()
            out[n] = point
    finally:
        if mode == "traced":
            tracemalloc.stop()
    return out


def _growth(points: dict[int, dict[str, float]], key: str, first: int, last: int) -> float:
    return points[last].get(key, math.nan) - points[first].get(key, math.nan)


def _memory(mem: Memory, corpus: Corpus, max_cached: int, quiet: bool) -> dict[str, Any]:
    """RSS while touching 10%, 50% and 100% of the users: first with Chroma's reads alone (the peer: what
    reading every user's data costs Chroma and the allocator), then through memtend, then traced."""
    users = len(corpus.users)
    checkpoints = sorted({max(1, users // 10), max(1, users // 2), users})
    gc.collect()
    before = _rss_mb()
    chroma = _touch(mem, corpus, checkpoints, "chroma", quiet)
    ours = _touch(mem, corpus, checkpoints, "memtend", quiet)
    traced = _touch(mem, corpus, checkpoints, "traced", quiet)  # its own pass: tracing inflates RSS itself
    first, last = checkpoints[0], checkpoints[-1]
    per_user = ours[last]["index_bytes_per_user"]
    unbounded_mb = (last - first) * per_user / 2**20  # what the cache would add if it kept every user
    # what a bounded cache may still add between the checkpoints (while it fills up to max_cached users)
    filling_mb = (min(last, max_cached) - min(first, max_cached)) * per_user / 2**20
    growth = {
        "chroma_rss_mb": _growth(chroma, "rss_mb", first, last),
        "chroma_rss_trimmed_mb": _growth(chroma, "rss_trimmed_mb", first, last),
        "rss_mb": _growth(ours, "rss_mb", first, last),
        "rss_trimmed_mb": _growth(ours, "rss_trimmed_mb", first, last),
        "traced_mb": _growth(traced, "traced_mb", first, last),
    }
    shares = {name: _ratio(max(value - filling_mb, 0.0), unbounded_mb) for name, value in growth.items()}
    # judged on RSS after malloc_trim (memory held); the untrimmed RSS share is reported beside it
    share = shares["rss_trimmed_mb"] if math.isfinite(shares["rss_trimmed_mb"]) else shares["rss_mb"]
    return {
        "rss_before_touching_mb": before,
        "checkpoints": {
            str(n): {
                **{f"chroma_{k}": v for k, v in chroma[n].items()},
                **ours[n],
                **{k: v for k, v in traced[n].items() if "traced" in k},
            }
            for n in checkpoints
        },
        "max_cached_users": max_cached,
        "cached_users": len(mem._indexes),
        "bounded": len(mem._indexes) <= max_cached,
        "index_bytes_per_user": per_user,
        "unbounded_growth_mb": unbounded_mb,
        "cache_filling_mb": filling_mb,
        "growth_mb": growth,
        "growth_shares": shares,
        "growth_share": share,
        "target": PLATEAU_TARGET,
        "pass": bool(len(mem._indexes) <= max_cached and share <= PLATEAU_TARGET),
    }


# ---------------------------------------------------------------------------------------------------------------
# Peers: what a user would pick instead, each given the same embedding model, measured beside memtend


class _Embedder:
    """The run's embedding model as the peers get it. While ``filling``, a text memtend already stored is answered
    with its stored vector (the peers' stores are filled untimed from memtend's records); every timed call runs the
    model, as the peers' own embedding would."""

    def __init__(self, ef: Any) -> None:
        self.ef = ef
        self.known: dict[str, np.ndarray] = {}
        self.filling = False

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self.filling and all(t in self.known for t in texts):
            return np.stack([self.known[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)
        return np.asarray(self.ef(list(texts)), dtype=np.float32)


class _Peer:
    """One system memtend is measured beside: ``add`` stores a user's texts in one call (embedding included),
    ``search`` answers a question for one user with ``k`` results (embedding the question included)."""

    name = ""

    def add(self, uid: str, texts: list[str]) -> None:
        raise NotImplementedError

    def search(self, uid: str, query: str, k: int) -> int:
        raise NotImplementedError

    def close(self) -> None:
        return None


class _RawChroma(_Peer):
    name = "raw Chroma"

    def __init__(self, collection: Any, embed: _Embedder) -> None:
        self.collection, self.embed, self.n = collection, embed, 0

    def add(self, uid: str, texts: list[str]) -> None:
        ids = [f"raw-{uid}-{self.n + i}" for i in range(len(texts))]
        self.n += len(texts)
        self.collection.add(
            ids=ids, embeddings=self.embed(texts), documents=texts, metadatas=[{"user_id": uid}] * len(texts)
        )

    def search(self, uid: str, query: str, k: int) -> int:
        return _raw_query(self.collection, self.embed, uid, query, k)


def _langchain_embeddings(embed: _Embedder) -> Any:
    from langchain_core.embeddings import Embeddings

    class ModelEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in embed(list(texts))]

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    return ModelEmbeddings()


class _LangchainChroma(_Peer):
    name = "langchain-chroma"

    def __init__(self, client: Any, embed: _Embedder) -> None:
        from langchain_chroma import Chroma

        self.client = client
        self.store = Chroma("scale_peer_langchain", embedding_function=_langchain_embeddings(embed), client=client)

    def add(self, uid: str, texts: list[str]) -> None:
        self.store.add_texts(texts, metadatas=[{"user_id": uid}] * len(texts))

    def search(self, uid: str, query: str, k: int) -> int:
        return len(self.store.similarity_search(query, k=k, filter={"user_id": uid}))

    def close(self) -> None:
        self.client.delete_collection("scale_peer_langchain")


class _LlamaIndexChroma(_Peer):
    name = "LlamaIndex Chroma"

    def __init__(self, client: Any, embed: _Embedder, batch: int) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.embeddings import BaseEmbedding
        from llama_index.vector_stores.chroma import ChromaVectorStore

        class ModelEmbedding(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return [float(x) for x in embed([query])[0]]

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return self._get_query_embedding(text)

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return [[float(x) for x in v] for v in embed(list(texts))]

        self.client = client
        collection = client.create_collection("scale_peer_llamaindex")
        store = ChromaVectorStore(chroma_collection=collection)
        # the same batches as the others (LlamaIndex embeds 10 texts per call unless told)
        self.index = VectorStoreIndex.from_vector_store(store, embed_model=ModelEmbedding(embed_batch_size=batch))

    def add(self, uid: str, texts: list[str]) -> None:
        from llama_index.core.schema import TextNode

        self.index.insert_nodes([TextNode(text=t, metadata={"user_id": uid}) for t in texts])

    def search(self, uid: str, query: str, k: int) -> int:
        from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

        filters = MetadataFilters(filters=[MetadataFilter(key="user_id", value=uid)])
        return len(self.index.as_retriever(similarity_top_k=k, filters=filters).retrieve(query))

    def close(self) -> None:
        self.client.delete_collection("scale_peer_llamaindex")


class _LangGraphStore(_Peer):
    def __init__(self, name: str, store: Any, closing: Callable[[], None] | None = None) -> None:
        self.name, self.store, self.closing, self.n = name, store, closing, 0

    def add(self, uid: str, texts: list[str]) -> None:
        from langgraph.store.base import PutOp

        ops = [PutOp(("memories", uid), f"m{self.n + i}", {"text": t}) for i, t in enumerate(texts)]
        self.n += len(texts)
        # InMemoryStore miscounts a batch holding one text twice: such a batch goes in parts without repeats
        part: list[Any] = []
        for op in ops:
            if any(o.value == op.value for o in part):
                self.store.batch(part)
                part = []
            part.append(op)
        self.store.batch(part)

    def search(self, uid: str, query: str, k: int) -> int:
        return len(self.store.search(("memories", uid), query=query, limit=k))

    def close(self) -> None:
        if self.closing is not None:
            self.closing()


def _make_peers(mem: Memory, raw: Any, embed: _Embedder, folder: Path, batch: int) -> list[_Peer]:
    from langgraph.store.memory import InMemoryStore
    from langgraph.store.sqlite import SqliteStore

    # SqliteStore's vector index is the sqlite-vec extension; Python builds without loadable extensions (as here)
    # reach it through pysqlite3 (its own SQLite, same API)
    try:
        from pysqlite3 import dbapi2 as sqlite3  # type: ignore[import-not-found]
    except ImportError:
        import sqlite3
    index = {"dims": 384, "embed": _langchain_embeddings(embed), "fields": ["text"]}
    conn = sqlite3.connect(str(folder / "peer_store.sqlite"), check_same_thread=False, isolation_level=None)
    sqlite_store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
    sqlite_store.setup()
    client = mem.storage.client
    return [
        _RawChroma(raw, embed),
        _LangchainChroma(client, embed),
        _LlamaIndexChroma(client, embed, batch),
        _LangGraphStore("LangGraph InMemoryStore", InMemoryStore(index=index)),  # type: ignore[arg-type]
        _LangGraphStore("LangGraph SqliteStore", sqlite_store, conn.close),
    ]


def _fill_peers(mem: Memory, peers: list[_Peer], embed: _Embedder, corpus: Corpus) -> None:
    """Every peer but raw Chroma (a copy of memtend's collection) gets every user's memories, from memtend's
    stored records and vectors (untimed)."""
    by_user: dict[str, list[str]] = {uid: [] for uid in corpus.users}
    offset = 0
    while True:
        got = mem.storage.memories.get(limit=5_000, offset=offset, include=["embeddings", "documents", "metadatas"])
        if not got["ids"]:
            break
        for n, (vector, meta) in enumerate(zip(got["embeddings"], got["metadatas"], strict=True)):
            uid = (meta or {}).get("user_id")
            if uid in by_user:
                doc = _stored_text(got, n)
                by_user[uid].append(doc)
                embed.known[doc] = np.asarray(vector, dtype=np.float32)
        offset += len(got["ids"])
    embed.filling = True
    try:
        for peer in peers[1:]:
            for uid, texts in by_user.items():
                for start in range(0, len(texts), 1_000):
                    peer.add(uid, texts[start : start + 1_000])
    finally:
        embed.filling = False
        embed.known.clear()


@dataclass(frozen=True)
class PeerSizes:
    """How much is measured beside the peers: users recalled, single writes, and batches of ``batch`` memories."""

    users: int
    writes: int
    batches: int
    batch: int


def _beside_peers(
    mem: Memory, corpus: Corpus, ef: Any, folder: Path, sizes: PeerSizes, rng: random.Random
) -> dict[str, Any]:
    """memtend and every peer, interleaved (the order rotates from one user to the next): first and second recall
    of users memtend has not cached, single writes, and batches of new memories, each beside the embedding model
    alone on the same texts."""
    embed = _Embedder(ef)
    with _raw_chroma(mem) as raw:
        peers = _make_peers(mem, raw, embed, folder, sizes.batch)
        try:
            _fill_peers(mem, peers, embed, corpus)
            return _measure_beside(mem, corpus, peers, embed, sizes, rng)
        finally:
            for peer in peers:
                peer.close()


class _Memtend(_Peer):
    name = "memtend"

    def __init__(self, mem: Memory) -> None:
        self.mem = mem

    def add(self, uid: str, texts: list[str]) -> None:
        if len(texts) == 1:
            self.mem.user(uid).remember(texts[0])
        else:
            self.mem.user(uid).log_many(texts)

    def search(self, uid: str, query: str, k: int) -> int:
        return len(self.mem.user(uid).recall(query, k=k))


class _EmbedderAlone(_Peer):
    name = "embedding alone"

    def __init__(self, embed: _Embedder) -> None:
        self.embed = embed

    def add(self, uid: str, texts: list[str]) -> None:
        self.embed(texts)

    def search(self, uid: str, query: str, k: int) -> int:
        self.embed([query])
        return k


def _measure_beside(
    mem: Memory, corpus: Corpus, peers: list[_Peer], embed: _Embedder, sizes: PeerSizes, rng: random.Random
) -> dict[str, Any]:
    users, writes, batches, batch = sizes.users, sizes.writes, sizes.batches, sizes.batch
    systems: list[_Peer] = [_Memtend(mem), *peers, _EmbedderAlone(embed)]
    times: dict[str, dict[str, list[float]]] = {
        p.name: {"first": [], "second": [], "single": [], "batch": []} for p in systems
    }
    empty: dict[str, int] = {p.name: 0 for p in systems}

    def rotated(i: int) -> list[_Peer]:
        shift = i % len(systems)
        return systems[shift:] + systems[:shift]

    for uid in list(mem._indexes):  # cached by ingest's write-or-merge reads: each first recall is a cold one
        mem.forget_index(uid)
    candidates = [u for u in corpus.users if u not in mem._indexes]
    sample = rng.sample(candidates, min(users, len(candidates)))
    for i, uid in enumerate(sample):
        for phase, q in (("first", corpus.queries[uid][0]), ("second", corpus.queries[uid][1])):
            for system in rotated(i):
                elapsed, n = _timed(system.search, uid, q, K)
                times[system.name][phase].append(elapsed)
                empty[system.name] += n == 0
    writers = rng.sample(corpus.users, min(writes, len(corpus.users)))
    for i, uid in enumerate(writers):
        text = _clip(_medium(rng, corpus.personas[uid]), rng)
        for system in rotated(i):
            times[system.name]["single"].append(_timed(system.add, uid, [text])[0])
    for i in range(batches):
        uid = corpus.users[(i * 7) % len(corpus.users)]
        p = corpus.personas[uid]
        texts = [_clip(_medium(rng, p) if rng.random() < 0.6 else _long(rng, p), rng) for _ in range(batch)]
        for system in rotated(i):
            times[system.name]["batch"].append(_timed(system.add, uid, texts)[0])
    embedder_batch_s = sum(times["embedding alone"]["batch"])
    out: dict[str, Any] = {"users": len(sample), "writes": len(writers), "batches": batches, "batch": batch}
    for system in systems:
        t = times[system.name]
        batch_s = sum(t["batch"])
        out[system.name] = {
            "first_recall": _percentiles(t["first"]),
            "second_recall": _percentiles(t["second"]),
            "single_write": _percentiles(t["single"]),
            "ingest_per_s": batches * batch / batch_s if batch_s else math.nan,
            "ingest_ratio": _ratio(embedder_batch_s, batch_s),
            "empty_results": empty[system.name],
        }
    return out


def _recallable(mem: Memory, corpus: Corpus, ids: dict[str, list[str]], n: int, rng: random.Random) -> dict[str, Any]:
    """Recall a sample of stored memories by their own text: each must come back in the top k."""
    pairs = [(uid, i) for uid in corpus.users for i in range(len(ids[uid]))]
    sample = rng.sample(pairs, min(n, len(pairs)))
    texts = {uid: [it.text for it in corpus.items[uid] if not it.single] for uid in corpus.users}
    for uid in corpus.users:
        texts[uid] += [it.text for it in corpus.items[uid] if it.single]  # the order ``ids`` was filled in
    found = 0
    for uid, i in sample:
        hits = mem.user(uid).recall(texts[uid][i], k=K)
        found += ids[uid][i] in {h.record.id for h in hits}
    return {"checked": len(sample), "found": found, "share": found / len(sample) if sample else math.nan}


def run(
    memories: int = 100_000,
    users: int = 1_000,
    queries: int = 200,
    seed: int = 0,
    *,
    batch: int = 100,
    peer_every: int = 5,
    max_cached_users: int = 64,
    path: str | Path | None = None,
    quiet: bool = True,
    peer_users: int = 50,
    peer_writes: int = 20,
    peer_batches: int = 5,
    peer_batch: int | None = None,
) -> dict[str, Any]:
    """Run every measurement once and return the numbers (see the module docstring). ``peer_users`` (0: no
    peers), ``peer_writes``, ``peer_batches``, ``peer_batch`` (default ``batch``): the sizes of the part measured
    beside the peers."""
    if memories < users or users < 2 or queries < 2:
        raise ValueError("need memories >= users >= 2 and queries >= 2")
    rng = random.Random(seed + 1)
    started = time.perf_counter()
    corpus = generate(memories, users, queries, seed)
    ef = default_embedding_function()
    ef(["warm the model up"])
    folder = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="memtend-scale-"))
    result: dict[str, Any] = {
        "config": {
            "memories": memories,
            "users": users,
            "queries": queries,
            "seed": seed,
            "k": K,
            "batch": batch,
            "peer_every": peer_every,
            "max_cached_users": max_cached_users,
            "peer_users": peer_users,
            "words_per_memory": float(np.mean([len(it.text.split()) for v in corpus.items.values() for it in v])),
        }
    }
    mem = Memory(path=folder, embedding_function=ef, max_cached_users=max_cached_users)
    load = _LoadLog()
    peaks: dict[str, float] = {}  # peak RSS so far (it only grows) at the end of each phase: where it rose
    try:
        rss_start = _rss_mb()
        if not quiet:
            print(f"ingesting {corpus.size:,} memories for {users:,} users into {folder}", file=sys.stderr)
        load.phase("ingest")
        ingest = _ingest(mem, corpus, ef, batch, peer_every, quiet)
        ids = ingest.pop("ids")
        result["ingest"] = ingest
        result["rss_after_ingest_mb"] = _rss_mb()
        result["stored"] = _check_stored(mem, corpus, ids)
        peaks["ingest"] = _peak_rss_mb()
        if not quiet:
            print("recall latency", file=sys.stderr)
        load.phase("recall")
        result["recall"] = _recall_latency(mem, corpus, ef, queries, rng)
        result["incremental"] = _incremental(mem, corpus, max(5, min(queries, 100)), rng)
        peaks["recall"] = _peak_rss_mb()
        if not quiet:
            print("memory plateau", file=sys.stderr)
        load.phase("memory")
        result["memory"] = _memory(mem, corpus, max_cached_users, quiet)
        result["memory"]["rss_start_mb"] = rss_start
        result["memory"]["peak_rss_mb"] = peaks["memory"] = _peak_rss_mb()
        result["memory"]["peak_rss_by_phase_mb"] = peaks
        result["memory"]["store_mb"] = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20
        result["recallable"] = _recallable(mem, corpus, ids, queries, rng)
        if peer_users:  # last: the peers' stores would weigh on the memory figures above
            if not quiet:
                print("beside the peers", file=sys.stderr)
            load.phase("peers")
            peers_started = time.perf_counter()
            sizes = PeerSizes(peer_users, peer_writes, peer_batches, peer_batch or batch)
            result["peers"] = _beside_peers(mem, corpus, ef, folder, sizes, rng)
            result["peers"]["peak_rss_mb"] = _peak_rss_mb()
            result["peers"]["seconds"] = time.perf_counter() - peers_started
    finally:
        mem.close()
        result["load"] = load.summary()
        if path is None:
            shutil.rmtree(folder, ignore_errors=True)
    result["seconds"] = time.perf_counter() - started
    return result


# ---------------------------------------------------------------------------------------------------------------
# Report


def _fmt(x: float, digits: int = 1) -> str:
    return "n/a" if not isinstance(x, int | float) or not math.isfinite(x) else f"{x:,.{digits}f}"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def table(r: dict[str, Any]) -> str:
    c, ing, rec, inc, mem = r["config"], r["ingest"], r["recall"], r["incremental"], r["memory"]
    rows: list[tuple[str, str, str, str, str, str]] = []

    def lat(d: dict[str, Any], key: str) -> str:
        return f"{_fmt(d[key]['p50_ms'])} / {_fmt(d[key]['p95_ms'])}"

    peer = ing["peer"]
    rows.append(
        (
            "ingest, memories/s (sampled users)",
            _fmt(peer["ingest_per_s"]),
            f"embed {_fmt(peer['embed_per_s'])}",
            f"{_fmt(ing['ratio'], 2)}",
            f">= {INGEST_TARGET:.2f}",
            _verdict(ing["pass"]),
        )
    )
    rows.append(("  log_many batches", _fmt(ing["log_many"]["per_s"]), "", _fmt(peer["log_many_ratio"], 2), "", ""))
    rows.append(
        (
            "  single remember, ms/call",
            _fmt(ing["remember"]["ms_per_call"]),
            f"embed {_fmt(peer['single_embed_ms'])}",
            _fmt(peer["remember_ratio"], 2),
            "",
            "",
        )
    )
    rows.append(("  all users, memories/s", _fmt(ing["per_s"]), "", "", "", ""))
    one = f"recall warm, one user ({rec['one_user']['records']} memories)"
    for label, key in ((one, "one_user"), ("recall warm, sample", "sample_warm")):
        d = rec[key]
        rows.append(
            (
                f"{label}, p50 / p95 ms",
                lat(d, "memtend"),
                f"chroma {lat(d, 'chroma')}",
                f"{_fmt(d['ratio_p50'], 2)} / {_fmt(d['ratio_p95'], 2)}",
                f"p95 <= {RECALL_TARGET}",
                _verdict(d["pass"]),
            )
        )
    d = rec["sample_cold"]
    rows.append(
        (
            "recall cold, sample, p50 / p95 ms",
            lat(d, "memtend"),
            f"chroma {lat(d, 'chroma')}",
            f"{_fmt(d['ratio_p50'], 2)} / {_fmt(d['ratio_p95'], 2)}",
            "(info)",
            "",
        )
    )
    rows.append(
        (
            "recall after a write, p50 ms",
            _fmt(inc["after_write"]["p50_ms"]),
            f"warm {_fmt(inc['warm']['p50_ms'])}",
            _fmt(inc["ratio_p50"], 2),
            f"<= {CYCLE_TARGET}",
            _verdict(inc["ratio_p50"] <= CYCLE_TARGET),
        )
    )
    rows.append(
        (
            f"index loads in {inc['cycles']} write+recall",
            str(inc["index_loads"]),
            f"same index: {inc['same_index_object']}",
            f"grew {inc['index_grew_by']}",
            "0",
            _verdict(inc["index_loads"] == 0 and inc["same_index_object"]),
        )
    )
    points = mem["checkpoints"]
    names = list(points)
    shares = mem["growth_shares"]

    def series(key: str) -> str:
        return " -> ".join(_fmt(points[n].get(key, math.nan), 0) for n in names)

    rows.append(
        (
            f"RSS MB (trimmed) at {' / '.join(names)} users",
            series("rss_trimmed_mb"),
            f"chroma {series('chroma_rss_trimmed_mb')}",
            _fmt(mem["growth_share"], 3),
            f"<= {PLATEAU_TARGET}",
            _verdict(mem["pass"]),
        )
    )
    rows.append(
        (
            "  RSS MB (untrimmed)",
            series("rss_mb"),
            f"chroma {series('chroma_rss_mb')}",
            _fmt(shares["rss_mb"], 3),
            "(info)",
            "",
        )
    )
    rows.append(
        (
            "  traced Python heap MB",
            series("traced_mb"),
            f"unbounded +{_fmt(mem['unbounded_growth_mb'], 0)}",
            _fmt(shares["traced_mb"], 3),
            "(info)",
            "",
        )
    )
    rows.append(
        (
            "  cached indexes / index KB per user",
            f"{mem['cached_users']} / {_fmt(mem['index_bytes_per_user'] / 1024)}",
            f"max {mem['max_cached_users']}",
            "",
            "bounded",
            _verdict(mem["bounded"]),
        )
    )
    rows.append(
        (
            "  peak RSS / store on disk, MB",
            f"{_fmt(mem['peak_rss_mb'], 0)} / {_fmt(mem['store_mb'], 0)}",
            "",
            "",
            "",
            "",
        )
    )
    st, ok = r["stored"], r["recallable"]
    rows.append(
        (
            "stored / recallable by own text",
            f"{st['collection_count']:,} / {ok['found']}/{ok['checked']}",
            f"expected {st['expected']:,}",
            "",
            "all",
            _verdict(st["ok"] and ok["found"] == ok["checked"]),
        )
    )
    head = ("metric", "memtend", "peer (same run)", "ratio", "target", "result")
    title = (
        f"memtend scale benchmark: {c['memories']:,} memories, {c['users']:,} users, {c['queries']} queries, "
        f"seed {c['seed']}, k={c['k']}, batch {c['batch']}, {c['words_per_memory']:.1f} words/memory, "
        f"{r['seconds']:.0f} s\n{_load_note(r)}"
    )
    return _table(title, head, rows)


def _load_note(r: dict[str, Any]) -> str:
    """How busy the machine was: the 1-minute load average over the run, and its mean in each phase."""
    load = r["load"]
    phases = ", ".join(f"{name} {_fmt(x, 1)}" for name, x in load["by_phase"].items())
    return (
        f"machine load (1-minute average) {_fmt(load['load1_min'])} / {_fmt(load['load1_mean'])} / "
        f"{_fmt(load['load1_max'])} min / mean / max on {load['cores']} cores; mean by phase: {phases}"
    )


def _table(title: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A title line, then the columns left-aligned to their widest cell, under a rule."""
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    lines = [
        title,
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


PEER_ROWS = (
    ("first recall of a user, p50 / p95 ms", "first_recall"),
    ("second recall, p50 / p95 ms", "second_recall"),
    ("single write, p50 / p95 ms", "single_write"),
)


def peers_table(r: dict[str, Any]) -> str:
    """Every figure of the part measured beside the peers, one column per system, and each system's figure as a
    ratio of memtend's (p95 for latencies; below 1: the peer is faster)."""
    peers = r["peers"]
    names = [n for n in peers if isinstance(peers[n], dict) and "first_recall" in peers[n]]
    rows: list[list[str]] = []
    for label, key in PEER_ROWS:
        rows.append([label, *(f"{_fmt(peers[n][key]['p50_ms'])} / {_fmt(peers[n][key]['p95_ms'])}" for n in names)])
        ours = peers["memtend"][key]["p95_ms"]
        rows.append(["  p95 / memtend's", *(_fmt(_ratio(peers[n][key]["p95_ms"], ours), 2) for n in names)])
    rows.append(["ingest, memories/s", *(_fmt(peers[n]["ingest_per_s"]) for n in names)])
    rows.append(["  / the embedding model alone", *(_fmt(peers[n]["ingest_ratio"], 2) for n in names)])
    rows.append(["empty answers", *(str(peers[n]["empty_results"]) for n in names)])
    c = r["config"]
    title = (
        f"beside the peers ({c['memories']:,} memories, {c['users']:,} users; {peers['users']} users recalled twice, "
        f"{peers['writes']} single writes, {peers['batches']} batches of {peers['batch']}; every system given the same "
        f"embedding model, order rotating per user; load {_fmt(r['load']['by_phase'].get('peers', math.nan))})"
    )
    return _table(title, ["", *names], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=100, help="memories per log_many call")
    parser.add_argument("--peer-every", type=int, default=5, help="time the embedding peer on every n-th user")
    parser.add_argument("--max-cached-users", type=int, default=64)
    parser.add_argument("--peer-users", type=int, default=50, help="users recalled beside the peers (0: no peers)")
    parser.add_argument("--peer-writes", type=int, default=20, help="single writes beside the peers")
    parser.add_argument("--peer-batches", type=int, default=5, help="batches of --batch new memories beside the peers")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    result = run(
        args.memories,
        args.users,
        args.queries,
        args.seed,
        batch=args.batch,
        peer_every=args.peer_every,
        max_cached_users=args.max_cached_users,
        quiet=False,
        peer_users=args.peer_users,
        peer_writes=args.peer_writes,
        peer_batches=args.peer_batches,
    )
    print(table(result))
    if "peers" in result:
        print()
        print(peers_table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
