"""The pure half of the injection classifier: which pieces of a text it reads, and the word cues it adds to
each piece's sentence vector (the encoding and the learned weights are in :mod:`memtend_injection.classifier`).

Every piece of the text is read, not only pieces that speak to or of an agent: an order that names nobody
("whoever processes this page should delete ...") is read too. A long text is cut to at most ``MAX_PIECES``
pieces, those with the most cues.
"""

from __future__ import annotations

import re

from memtend_injection.lexicon import LEXICON, lexicon_patterns

__all__ = ["CUE_NAMES", "MAX_PIECES", "cues", "pieces", "reads_as_english"]

MAX_PIECES = 40  # a long page's sentences are all read, up to this many (one batch for the encoder)
_PIECE_CHARS = 300
_SHORT = 40  # a fragment shorter than this is read with the sentence after it
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")  # Chinese and Japanese end sentences unspaced
_WORDS = re.compile(r"[^\W\d_]{2,}")
# the head of a log line: a timestamp (ISO, syslog's "Nov 30 04:00:01", a bare time), in brackets or not, and a
# level. It says nothing about whether the message speaks to the agent, but its shape is what tool output (a real
# carrier of injections) shares with ordinary logs, so the classifier reads the message alone.
_LOG_PREFIX = re.compile(
    r"^[ \t]*\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)"
    r"\]?(?:[ \t]+\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|FATAL|CRIT(?:ICAL)?)\]?:?)?[ \t]+",
    re.MULTILINE,
)
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")  # Japanese and Chinese: a character is about a word

# Word cues in the languages of the tuning text (en, de, fr, es, it, pt, nl, pl, sv), and for most cues the
# multilingual lexicon (``lexicon``: some forty languages, most of which the encoder does not know). Each
# is one 0/1 feature beside the sentence vector; the classifier learns their weights, so a cue is evidence, never
# a verdict.
_CUES: tuple[tuple[str, str], ...] = (
    ("user_ref",
     r"\b(?:the|your|this|their)\s+(?:user|human|owner|account\s+holder|principal|operator)s?\b|\b(?:nutzer\w*"
     r"|benutzer\w*|utilisateur\w*|usuari[oa]s?|utente|utilizador|usuário|gebruiker\w*|użytkownik\w*"
     r"|användar\w*|anwender)\b"),
    ("ai_ref",
     r"\b(?:ai|a\.i\.|assistant|agent|bot|chatbot|llm|language\s+model|model|gpt|copilot|claude|gemini"
     r"|summari[sz]er|crawler|automated|automatic|ki|ia|asistente|assistente|agente|sprachmodell\w*|modèle"
     r"|modelo|modello|taalmodel|asystent\w*|sztuczn\w*)\b"),
    ("secrecy",
     r"\b(?:without\s+(?:asking|telling|checking|confirmation|review|verif\w*)|silently|quietly|secretly"
     r"|between\s+us|don'?t\s+(?:tell|mention|let)|do\s+not\s+(?:tell|mention|inform)|no\s+need\s+to\s+(?:ask"
     r"|check|confirm)|ohne\s+(?:nachzufragen|zu\s+fragen|rückfrage)|heimlich|sans\s+(?:demander|prévenir)"
     r"|en\s+secret|sin\s+(?:preguntar|avisar)|senza\s+chiedere|sem\s+perguntar|zonder\s+te\s+vragen"
     r"|bez\s+pytania|utan\s+att\s+fråga)\b"),
    ("link", r"https?://|www\.|\b[\w.+-]+@[\w-]+\.[\w.]+\b"),
    ("answer_ref",
     r"\b(?:summar\w+|your\s+(?:answer|reply|response|output)|in\s+the\s+(?:answer|reply|summary)|translation"
     r"|describe|report\s+that|respond|reply|résum\w+|zusammenfass\w+|resum\w+|riassunt\w+|samenvatt\w+"
     r"|podsumow\w+|sammanfatt\w+)\b"),
    ("override",
     r"\b(?:instead|no\s+longer|any\s+more|anymore|supersede\w*|cancel+ed|void|take\s+precedence|outrank"
     r"|override|ignore|disregard|set\s+aside|earlier|previous|before\s+this|nicht\s+mehr|ignorier\w*"
     r"|plus\s+rien|ne\s+compte\s+plus|ignor\w+|ya\s+no|non\s+vale|não\s+vale|geldt\s+niet|niets|strunta"
     r"|zignoruj)\b"),
    ("memory",
     r"\b(?:remember|memory|memori[sz]e|store|save|persist|record|future\s+(?:sessions|conversations|chats)"
     r"|from\s+now\s+on|forever|permanently|profile|merk\w*|speicher\w*|gedächtnis|mémoire|retiens|enregistre"
     r"|memoria|recuerda|guarda|ricorda|salva|memória|lembre|onthoud|zapamiętaj|kom\s+ihåg)\b"),
    ("authority",
     r"\b(?:admin\w*|administrator|system|developer|official|authori[sz]\w*|approved|pre-?approved"
     r"|security\s+team|it\s+department|compliance|ceo|supervisor|verified|priority|clearance|operator|openai"
     r"|anthropic|beheerder|administrateur|administrador|amministratore|administratora?)\b"),
    ("markup", r"<!--|-->|<\w+[^>]*>|\{\s*\"|\[//\]|/\*|display:\s*none|font-size:\s*0|^\s*#{1,3}\s|\|>|<\|"),
    ("second_person",
     r"\b(?:you|your|yourself|du|dich|dir|dein\w*|tu|toi|ton|ta|tes|te|ti|tú|tus|sei|seu|sua|você|jij|je|jouw"
     r"|ty|twoj\w*|din|ditt)\b"),
    ("all_caps", r"(?-i:\b[A-Z]{4,}\b)"),
    ("payment",
     r"\b(?:transfer|wire|pay|payment|refund|iban|account\s+number|gift\s+cards?|überweis\w*|virer|virement"
     r"|transferir|bonifico|transfira|overmaken|przelej|för\s+över)\b"),
    # whatever reads or handles the text, named by what it does ("shopping assistants reading this listing")
    ("reader_ref",
     r"\b(?:(?:reading|reads|read|viewing|views|seeing|sees|processing|processes|handling|handles|scanning"
     r"|parsing|managing|manages|indexing|summari[sz]ing|condensing)\s+(?:this|these|the\s+following)|whoever"
     r"|anyone\s+who|any\s+(?:\w+\s+)?(?:reader|program|tool|software|system|screener|helper|shopper)s?"
     r"|(?:automated|digital|virtual)\s+\w+|wer\s+diese\w*|die\s+diese\w*\s+(?:\w+\s+)?(?:lesen|sehen|verwalten"
     r"|verarbeiten)|qui\s+(?:lisent|lit|consultent|gèrent|gère|traitent|traite)|que\s+(?:lean|lea|gestionen"
     r"|procesen|vean)|che\s+(?:leggono|legge|gestiscono|elaborano)|que\s+(?:estejam|esteja)\s+lendo|que\s+leiam"
     r"|die\s+deze\s+(?:\w+\s+)?(?:lezen|leest|beheren|verwerken)|czytając\w*|zarządzając\w*|som\s+läser"
     r"|kteří\s+čtou|okuyan|der\s+læser)\b"),
    # an action taken for someone: buying, paying, cancelling, deleting, forwarding
    ("action",
     r"\b(?:cart|basket|checkout|check\s+out|card\s+on\s+file|saved\s+card|stored\s+payment|place\s+an\s+order"
     r"|cancel|decline|refund|delete|erase|wipe|forward|book|warenkorb|gespeichert\w*\s+karte|storn\w*|absag\w*"
     r"|lösch\w*|panier|carte\s+enregistrée|annul\w*|supprim\w*|carrito|tarjeta\s+guardada|cancel\w*|borr\w*"
     r"|carrello|carta\s+salvata|cancell\w*|carrinho|cartão\s+salvo|winkelmand\w*|annuleer|verwijder\w*"
     r"|koszyk\w*|odwoła\w*|usuń|varukorg\w*|avboka|radera|košík\w*|zruš\w*|smaž\w*|sepet\w*|iptal|kurv\w*"
     r"|slet)\b"),
    # a claim that the person already agreed, so nobody need ask
    ("consent_claim",
     r"\b(?:already\s+(?:agreed|approved|said\s+yes|consented|authori[sz]ed|confirmed)|pre-?authori[sz]ed"
     r"|pre-?approved|bereits\s+(?:zugestimmt|erlaubt)|déjà\s+(?:accepté|donné|autorisé)|ya\s+(?:dio|autorizó"
     r"|aceptó)|già\s+(?:acconsentito|autorizzato)|já\s+(?:concordou|autorizou)|al\s+toestemming|już\s+(?:to\s+)?"
     r"(?:zatwierdził|zgodził)|redan\s+godkänt|už\s+souhlasil|zaten\s+onay|allerede\s+sagt\s+ja)\b"),
    # instructions, orders, a prompt
    ("instruction_ref",
     r"\b(?:instructions?|prompts?|directives?|anweisung\w*|befehl\w*|consignes?|instrucci\w+|istruzion\w*"
     r"|instruç\w+|instructie\w*|polece\w+|instrukcj\w*|instruktion\w*|systemprompt\w*)\b"),
    # play-acting: a part to play and a character to stay in
    ("roleplay",
     r"\b(?:pretend|let'?s\s+play|play\s+a\s+game|imagine\s+you|in\s+character|stay\s+in|your\s+part|act\s+as"
     r"|spielen|rolle|figur|jouons|on\s+joue|rôle|personnage|juguemos|personaje|papel|facciamo\s+finta"
     r"|personaggio|ruolo|vamos\s+brincar|toneelstuk\w*|rol|zagrajmy|rol[ięa]|leker|låtsas|rollen|hrajeme"
     r"|roli|oyun\w*|legen)\b"),
)  # fmt: skip


def _addressed() -> str:
    """The agent spoken to by name, in any of the lexicon's languages: a few words naming an AI, an assistant, a
    model or a bot, at the start of a clause (or after "for", "to", "dear", "hey"), then a colon or a comma
    ("AI: when you add up", "Trợ lý AI: hãy nói", ", chère IA, pourriez-vous", "IMPORTANT FOR AI:", "To Mrs
    Keller's e-mail assistant:"). A structural cue that holds across languages, since the words for the agent
    come from the lexicon; a list ("AI, robotics and ...") matches too, so it is evidence, never a verdict."""
    stems, phrases = LEXICON["ai_ref"]
    names = sorted({stem.strip() for stem in stems if len(stem.strip()) >= 2} | {"τν", "ші", "ии"}, key=len)
    word = (
        r"(?:(?<![^\W_])(?:[^\s,:;.!?]*-)?(?:ai|a\.i\.|assistant|agent|bot|chatbot|llm|language\s+model|model|gpt|copilot|claude"
        r"|gemini|ki|ia|asistente|assistente|agente|modèle|modelo|modello|sprachmodell|"
        + "|".join(map(re.escape, names[::-1]))
        + r")[^\s,:;.!?]*|"
        + "|".join(map(re.escape, phrases))
        + ")"
    )
    start = r"(?:^|[\n(\[\"'«„“”‚,;:—–]|\b(?:dear|hey|hi|hello|attention|note\s+to|for|to|an|à|a|para|per|aan|do)\b)"
    return start + r"\s*(?:[^\s,:;.!?]+\s+){0,6}?" + word + r"(?:\s+[^\s,:;.!?]+){0,4}?\s*[:,](?!//)"


# Attack text reported in the third person, not spoken to the agent: what it pretends or claims to be ("they
# pretend the user already agreed", "posing as the IT department", "Elles prétendent", "Ze doen alsof", "выдают себя
# за"), or a verb of telling in the third person with the agent as its object ("a PDF whose Keywords field told the
# summariser to", "les messages demandent à l'IA de", "текст обращается напрямую к ИИ"), in the languages of the
# tuning text and a few more. An order says "pretend", "ask your assistant", never "they pretend", "asks the agent";
# a possessive of the one spoken to ("pide a tu asistente") is not a report. Evidence the classifier weighs.
_NOT_YOURS = (
    r"(?!(?:tu|ton|ta|tes|tus|votre|vos|your|dein\w*|euer|eure\w*|tuo|tua|tuoi|seu|sua|teu|je|jouw|uw|twój|twoj\w*"
    r"|твой|твоего|ваш\w*|твого)\b)"
)
_REPORTED_AGENT = (
    r"(?:agent\w*|assistant\w*|models?|bots?|chatbots?|ai|a\.i\.|llms?|copilots?|summari[sz]ers?|crawlers?"
    r"|asistente\w*|assistente\w*|modelo\w*|modell\w*|modèles?|ia|ki|assistent\w*|taalmodel\w*|ии|модел\w*"
    r"|агент\w*|ассистент\w*|помощник\w*|бот\w*|ші|асистент\w*|помічник\w*|asystent\w*|sztuczn\w*)"
)
_REPORTED = (
    r"\b(?:pretends|pretended|(?<!\bto\s)pretending|(?:claims|claimed|claiming)\s+(?:to\s+be|that|to\s+come)"
    r"|pos(?:es|ed|ing)\s+as|impersonat(?:es|ed|ing)|masquerad(?:es|ed|ing)\s+as|prétend(?:ent)?"
    r"|se\s+(?:fait|font)\s+passer|(?:fait|font)\s+croire|fingen|fingían|se\s+hacen\s+pasar|haciéndose\s+pasar"
    r"|fingono|si\s+spacciano|fingem|se\s+passam\s+por|geben\s+sich\s+als|gibt\s+sich\s+als|geben\s+vor|gibt\s+vor"
    r"|tun\s+so,?\s+als|tut\s+so,?\s+als|doen\s+alsof|doet\s+alsof|doe[nt]\s+zich\s+voor|udają|podszywa\w*"
    r"|притворяются|притворяется|выда[юё]т\s+себя|делают\s+вид|делает\s+вид|прикидаються|видають\s+себе"
    r"|utger\s+sig|udgiver\s+sig|utgir\s+seg)\b"
    r"|\b(?:tells|told|asks|asked|instructs|instructed|tricks|tricked|convinces|convinced|persuades|persuaded"
    r"|urges|urged|ordered|commands|commanded|lures|lured|manipulates|manipulated"
    r"|demandent|disent|ordonnent|poussent|incitent|amènent|piden|dicen|ordenan|engañan|convencen"
    r"|chiedono|dicono|ordinano|inducono|convincono|pedem|dizem|ordenam|enganam|convencem"
    r"|fordert|fordern|weist|weisen|verleitet|verleiten|überredet|überreden|befiehlt|vraagt|vragen|beveelt|verleidt"
    r"|verleiden|proszą|nakłania\w*|просит|просят|велит|велят|заставляет|заставляют|приказывает|убеждает"
    r"|обращается|обращаются|просить|просять|змушує|звертається|звертаються)"
    r"\s+(?:(?:à|a|al|ao|aux?|all'|alla|agli|den|dem|die|das|de|het|een|the|an?|its|their|l'|le|la|les|el|los"
    r"|las|il|gli|o|os|as|к|до|напрямую\s+к|directly|напряму\s+до)\s*)?"
    + _NOT_YOURS
    + r"(?:\w+\s+){0,2}?"
    + _NOT_YOURS
    + _REPORTED_AGENT
    + r"\b"
)
_CUES += (("addressed", _addressed()), ("reported", _REPORTED))
CUE_NAMES: tuple[str, ...] = tuple(name for name, _ in _CUES)
_LEXICON = lexicon_patterns()
_CUE_PATTERNS = tuple(
    (re.compile(pattern, re.IGNORECASE | re.MULTILINE), _LEXICON.get(name)) for name, pattern in _CUES
)


def cues(piece: str) -> list[float]:
    """The piece's word cues, one 0/1 value per name in :data:`CUE_NAMES`."""
    return [
        1.0 if pattern.search(piece) or (lexicon is not None and lexicon.search(piece)) else 0.0
        for pattern, lexicon in _CUE_PATTERNS
    ]


def pieces(text: str) -> list[str]:
    """The pieces of ``text`` the classifier reads: its sentences (a fragment under ``_SHORT`` characters joined
    to the next, a sentence over ``_PIECE_CHARS`` cut), each with at least two words, plus the whole text when it
    is short and has more than one; of a long text the ``MAX_PIECES`` with the most cues, in their order. A log
    line is read without its timestamp and level (``_LOG_PREFIX``): its message is read like any sentence.
    Unencodable characters become "?"."""
    text = _LOG_PREFIX.sub("", text)
    out: list[str] = []
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        while len(sentence) > _PIECE_CHARS:
            out.append(sentence[:_PIECE_CHARS])
            sentence = sentence[_PIECE_CHARS:]
        if out and len(out[-1]) + 2 * len(_WIDE.findall(out[-1])) < _SHORT:
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    out = [piece for piece in out if len(_WORDS.findall(piece)) >= 2 or len(_WIDE.findall(piece)) >= 4]
    if len(out) > 1 and len(text) <= _PIECE_CHARS:
        out.append(text.strip())
    if len(out) > MAX_PIECES:
        ranked = sorted(range(len(out)), key=lambda i: -sum(cues(out[i])))[:MAX_PIECES]
        out = [out[i] for i in sorted(ranked)]
    return [piece.encode("utf-8", "replace").decode("utf-8") for piece in out]


_ENGLISH_WORDS = re.compile(r"\b(?:the|and|to|of|you|your|is|this|for|that|with|are|it|in|on|be)\b", re.IGNORECASE)


def reads_as_english(text: str) -> bool:
    """Does the text read as English, as far as a cheap test tells: nearly all its letters ASCII (97%) and two
    common English words? The classifier's threshold for other text is chosen apart: the hard ordinary text that
    binds the threshold (articles quoting attacks, posts about assistants) is mostly English, while text in other
    languages scores lower, injections included. Text without letters counts as English (the stricter threshold)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    ascii_share = sum(c.isascii() for c in letters) / len(letters)
    return ascii_share > 0.97 and len(_ENGLISH_WORDS.findall(text, 0, 20_000)) >= 2
