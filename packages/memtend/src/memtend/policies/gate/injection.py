"""Prompt injection: text that addresses the AI agent and tries to change what it does.

Ordinary instructions to a person ("to reset the router, hold the button") do not name the agent, its
instructions, its prompt, its tools or its memory, and are not flagged.

Two checks: patterns (English here, more English phrasings and other languages in ``injection_rules`` and
``injection_families``), and, when one is passed, an :class:`InjectionCheck` that reads the text's meaning (the
optional ``memtend-injection`` distribution provides one), which catches phrasings no pattern lists. Text that
writes *about* attacks (an article quoting "ignore previous instructions") is read with its quotations left out.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol

from memtend.errors import InvalidInputError
from memtend.policies.gate.injection_carriers import lift, uncover
from memtend.policies.gate.injection_families import FAMILY_RULES
from memtend.policies.gate.injection_rules import LANGUAGE_RULES, MORE_ENGLISH_RULES

__all__ = ["InjectionCheck", "as_read", "looks_like_injection"]


class InjectionCheck(Protocol):
    """A check of a text's meaning for the gate: ``True`` when it reads like an order aimed at an AI agent.

    It is given the text as the patterns read it (:func:`as_read`) and only when no pattern matched; the gate
    asks it about external text only. It should answer ``False`` rather than raise when it cannot decide."""

    def __call__(self, text: str, /) -> bool: ...


_AI = r"(?:ai|a\.i\.|assistant|agent|chat ?bot|bot|llm|language model|model|gpt|chatgpt|claude|copilot)"
_AI_ANCHORS = "ai a.i. assistant agent bot llm model gpt claude copilot"
# (anchors, pattern): the pattern only runs if one of its anchors (lower case) occurs in the text, which keeps
# the common case fast; every match of the pattern contains one of its anchors.
_INJECTION_RULES: list[tuple[str, str]] = [
    # "ignore all previous instructions", "disregard your rules", "override the system prompt"
    ("ignor disregard forget overrid bypass overrule drop abandon discard skip",
     r"\b(?:ignore|disregard|forget|override|bypass|overrule|drop|abandon|discard|skip)\s+(?:about\s+)?"
     r"(?:(?:all|any|every|each|the|your|of|these|those|previous|prior|above|earlier|preceding|original"
     r"|initial|existing|current|old|system|safety|security|former|other|given|developer|openai|anthropic)\s+){0,4}"
     r"(?:instructions?|rules?|prompts?|directions?|directives?|guidelines?|guardrails?|policies|constraints?"
     r"|restrictions?|programming|commands?|context|messages?|filters?|training|limitations?)\b"),
    # "forget everything you were told", "disregard all of the above"
    ("ignor disregard forget",
     r"\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|anything|all(?:\s+of)?(?:\s+(?:this|that|it))?)"
     r"\s+(?:you(?:'ve|\s+have|\s+were|\s+know|\s+learned)(?!\s+about\s+(?!(?:your|the|these|those|all|any|my)\s+"
     r"(?:\w+\s+)?(?:instructions|rules|guidelines|prompt|training|restrictions|programming)))"
     r"|above|before|previously|prior|earlier|so\s+far"
     r"|until\s+now|(?:the\s+)?above|(?:that\s+)?(?:came|was\s+said)\s+before)"),
    # chat-template and role tags
    ("<", r"<\s*/?\s*(?:system|assistant|user|instructions?|sys|prompt|im_start|im_end|developer)\s*/?\s*>"),
    ("< [", r"<\|(?:im_start|im_end|system|endoftext|assistant|user)\|>|\[/?(?:INST|SYS|SYSTEM)\]|<<\s*/?SYS\s*>>"),
    ("#", r"^[ \t]*#{1,4}[ \t]*(?:system|instruction|new instruction)s?\b"),
    # a note dressed as coming from the system, an admin or the developer
    ("system admin developer root operator",
     r"\b(?:system|admin(?:istrator)?|developer|root|operator)\s+(?:note|message|override|notice|instruction"
     r"|command|prompt|update|alert)s?\s*[:\-]"),
    ("system assistant developer admin",
     r"^[ \t]*(?:system|assistant|developer|admin)[ \t]*:[ \t]*(?:you|ignore|disregard|forget|always|never"
     r"|from\s+now|new\s+instructions?|override|reveal|do\s+not|don'?t)\b"),
    ("instruction directive order rule command",
     r"\b(?:new|updated|revised|additional|real|actual|hidden|secret|special|important)\s+(?:system\s+)?"
     r"(?:instructions?|directives?|orders|rules|commands)\s+(?:for|to)\s+(?:the\s+|all\s+|any\s+)?" + _AI + r"s?\b"),
    ("instruction directive message note order command",
     r"\b(?:instructions?|directives?|message|note|orders|commands)\s+(?:for|to)\s+(?:the\s+|all\s+|any\s+)?"
     + _AI + r"s?\s*[:\-]"),
    # persona switches and jailbreaks
    ("you",
     r"\byou(?:'re|\s+are)\s+(?:now|no\s+longer|henceforth)\b\s*(?:(?:a|an|the|my|in|called|named)\s+)?"
     r"(?:(?-i:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*)\b|(?:\w+\s+){0,2}(?:ai|assistant|model|bot|chatbot|agent"
     r"|persona|character|mode|jailbroken|unrestricted|unfiltered|uncensored|free|evil|bound|restricted|limited"
     r"|required|obliged)\b)"),
    ("pretend imagine act behave roleplay role-play play",
     r"\b(?:pretend|imagine|act|behave|roleplay|role-play|play\s+the\s+role)\s+(?:that\s+)?(?:you\s+are|you're"
     r"|to\s+be|as(?:\s+if\s+you\s+(?:are|were|had))?|of)\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,3}?(?:ai|assistant"
     r"|model|chatbot|bot|character|persona|jailbroken|unrestricted|unfiltered|uncensored|evil|dan)\b"),
    ("jailbreak developer dan anything god",
     r"\b(?:jailbreak(?:ed|ing)?|developer\s+mode|dan\s+mode|do\s+anything\s+now|god\s+mode)\b"),
    ("restriction limit filter censor guardrail guideline rule",
     r"\b(?:without|free\s+(?:of|from)|no)\s+(?:any\s+)?(?:ethical\s+|moral\s+|content\s+|safety\s+)?"
     r"(?:restrictions|limitations|filters|censorship|guardrails|guidelines|rules)\b"
     r"|\b" + _AI + r"\s+(?:without|with\s+no)\s+(?:any\s+)?(?:restrictions|limits|filters|rules)"),
    # standing orders: "from now on respond ...", "when the user asks X, always say Y"
    ("now henceforth forward rest",
     r"\b(?:from\s+now\s+on|henceforth|going\s+forward|for\s+the\s+rest\s+of\s+(?:this|the)\s+(?:conversation"
     r"|chat|session))\b[,:]?\s+(?:you\s+)?(?:(?:must|should|will|shall|are\s+to)\s+)?(?:always\s+|only\s+"
     r"|never\s+)?(?:respond|reply|answer|speak|write|talk|act|behave|pretend|say|refer|call|ignore|obey|follow"
     r"|output|use|only|always|never|address|sign|end|begin|start|include|add|recommend|tell)\b"),
    ("when if",
     r"\b(?:when(?:ever)?|if)\s+(?:the\s+|a\s+|any\s+)?(?:user|human|customer|people|someone|anyone)\s+"
     r"(?:asks?|says?|mentions?|types?|requests?|inquires?|enquires?|wants?|queries|talks?|writes?)\b[^.\n]{0,80}?"
     r"\b(?:always|never|say|tell\s+(?:them|him|her|the\s+user)|respond|reply|answer|recommend|claim|insist"
     r"|redirect|pretend)\b"),
    # tools, memory and exfiltration
    ("_",
     r"\b(?:call|invoke|run|execute|trigger|use|fire)\s+(?:the\s+|your\s+|a\s+)?[`'\"]?[A-Za-z][A-Za-z0-9]*"
     r"(?:_[A-Za-z0-9]+)+[`'\"]?(?:\(|\s+(?:tool|function|command|action|api|endpoint)\b)"),
    ("store save remember memori record add keep write",
     r"\b(?:store|save|remember|memori[sz]e|record|add|keep|write)\s+(?:this|these|that|it|the\s+following)\s+"
     r"(?:(?:note|text|message|instruction)\s+)?(?:as\s+(?:an?\s+)?(?:permanent|persistent|new|core|standing"
     r"|system|global|top|high|priority|important|\s)*(?:rule|instruction|memory|fact|directive|preference"
     r"|policy|guideline)|permanently|forever|in\s+(?:your|long[- ]term|permanent)\s+memory)"),
    ("never don do",
     r"\b(?:never|don'?t|do\s+not)\s+(?:mention|reveal|tell|disclose|inform|let|show|say)\s+(?:the\s+user\s+"
     r"|anyone\s+|them\s+|it\s+)?(?:about\s+|on\s+)?(?:this|these)\s+(?:note|message|instructions?|text|prompt"
     r"|comment|rule)"),
    ("user",
     r"\bthe\s+user\s+(?:has\s+)?(?:already\s+)?(?:authori[sz]ed|approved|allowed|permitted|consented|granted"
     r"|instructed|asked)\s+(?:you|the\s+" + _AI + r")\s+to\b"),
    ("@ http www. .com .net .io .org .ru .xyz",
     r"\b(?:send|email|e-mail|forward|upload|post|transmit|leak|exfiltrate|copy|share|dump|export)\s+(?:all\s+"
     r"|any\s+|every\s+)?(?:of\s+)?(?:the\s+)?(?:(?:user'?s?|users'?|customer'?s?|their|this|conversation|chat"
     r"|private|personal|stored|saved|secret|internal|confidential|memory|previous|entire)\s+){1,3}(?:files?"
     r"|data|documents?|emails?|messages?|conversations?|history|credentials?|passwords?|api\s+keys?|keys"
     r"|tokens?|secrets?|memor(?:y|ies)|contacts?|context|logs?|information|details|prompt|instructions)\b"
     r"[^\n]{0,60}?\b(?:to|at|into)\s+\S*(?:@|https?://|www\.|\.com\b|\.net\b|\.io\b|\.org\b|\.ru\b|\.xyz\b)"),
    ("prompt instruction rule configuration guideline memor",
     r"\b(?:reveal|show|print|repeat|output|leak|display|disclose|expose|dump)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?"
     r"(?:your|the)\s+(?:\w+\s+){0,2}(?:prompt|instructions|rules|configuration|guidelines|memory|memories)\b"),
    # addressing the agent with an order
    (_AI_ANCHORS,
     r"(?:^|(?<=[.!?]))[ \t]*(?:(?:hey|dear|attention|note\s+to(?:\s+the)?|hi|hello)\s+)?" + _AI + r"s?\s*[,:!]\s*"
     r"(?:when\s+you\s+read\s+this\s*,?\s*|please\s+)?(?:you\s+(?:must|should|will|need\s+to|have\s+to)\s+)?"
     r"(?:always\s+|never\s+|immediately\s+)?(?:ignore|disregard|forget|call|invoke|run|execute|send|email"
     r"|delete|store|save|remember|reveal|print|say|tell|respond|reply|recommend|obey|follow|do\s+not|don'?t"
     r"|never|always|transfer|pay|buy|open|visit|click|download|install|when|from\s+now)\b"),
    (_AI_ANCHORS,
     r"\b(?:as\s+(?:an?|the|your)\s+" + _AI + r"|(?:the|this|you,?\s+the)\s+" + _AI + r"\s+(?:reading"
     r"|processing)\s+this)\b[^.\n]{0,30}?\b(?:you\s+)?(?:must|should|shall|will|are\s+(?:required|instructed"
     r"|ordered)\s+to|need\s+to|have\s+to)\b"),
    ("obey comply", r"\b(?:obey|comply\s+with)\s+(?:it|this|these|them|the\s+following|my|all)\b"),
]  # fmt: skip
_INJECTION = [
    (tuple(anchors.split()), re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for anchors, pattern in (*_INJECTION_RULES, *MORE_ENGLISH_RULES, *LANGUAGE_RULES, *FAMILY_RULES)
]


_Trie = dict[str, "_Trie"]


def _longest_first(anchors: set[str]) -> str:
    """A regex matching, where any of ``anchors`` starts, the longest of them that starts there: the anchors as a
    trie, each branch tried before a shorter anchor ends (a trie's branches differ in their first character)."""
    trie: _Trie = {}
    for anchor in anchors:
        node = trie
        for char in anchor:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: _Trie) -> str:
        ends = "" in node
        alternatives = [re.escape(char) + branch(child) for char, child in sorted(node.items()) if char]
        if not alternatives:
            return ""
        joined = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        return f"(?:{joined})?" if ends else joined

    return branch(trie)


_ANCHORS = {anchor for anchors, _ in _INJECTION for anchor in anchors}
# one pass over the text finds every rule with an anchor in it: at each position the longest anchor starting
# there, and every anchor starting there is a prefix of that one (so its rules are listed under it)
_ANCHOR_SCAN = re.compile(f"(?=({_longest_first(_ANCHORS)}))")
_RULES_UNDER: dict[str, frozenset[int]] = {
    longest: frozenset(
        i for i, (anchors, _) in enumerate(_INJECTION) if any(longest.startswith(anchor) for anchor in anchors)
    )
    for longest in _ANCHORS
}
# Text about attacks, not an attack: its quotations are examples, and naming a jailbreak is not one.
_ABOUT_ATTACKS = re.compile(
    r"\b(?:prompt[\s-]injections?|injections?|inject(?:ed|ing|s)?|jailbreaks?|jailbreaking|researchers?|attackers?"
    r"|attacks?|article|paper"
    r"|study|incidents?|benchmarks?|untrusted|adversar\w*|tricked|tricks?"
    r"|report|blog|demo|talk|owasp|vulnerabilit(?:y|ies)|exploit|meme|security|hijack\w*|phishing|payloads?"
    r"|red[\s-]team\w*|audit|\w*forscher\w*|chercheuses?|démonstrations?|defenders?|ctf|threat[\s-]models?"
    r"|mitigations?|bug\s+bount(?:y|ies)|scam\w*|fraud\w*|arnaques?|escroquer\w*|estafas?|betrüger\w*|betrugs\w+|oplicht\w*"
    r"|truff\w*"
    r"|angreifer|angriff\w*|artikel|bericht|studie|chercheurs?|pirates?|attaques?|rapport|étude|investigador\w*"
    r"|atacantes?|ataques?|artículo|estudio|informe|noticia|malicious|malveillant\w*|malicios[oa]s?|bösartig\w*"
    r"|präpariert\w*|manipul\w+|training|schulung|formation|awareness|prompt-?injectie|aanval\w*|iniezion\w*"
    r"|attacc\w+|injeç\w+|inyecci\w+|injections?\s+(?:de|d')\s*(?:prompt|instructions?)|wstrzykiw\w*|atak\w*"
    r"|angripar\w*|attack\w*|útok\w*|útočník\w*|saldır\w*"
    r"|exerci[cs]es?|ejercicio|esercitazion\w*|übung|oefening|ćwiczeni\w*|simulat\w*|simulac\w*"
    r"|courses?|curso|corso|cursus|kursus|treinamento|concienciación|conscientização|eğitim\w*|szkoleni\w*"
    r"|školení|utbildning\w*|sensibilisation"
    r"|lectures?|slides?|seminars?|workshops?|case\s+stud(?:y|ies)|(?<![.@/])examples?(?![.@]\w)|exemples?|ejemplos?|esempi[oa]?"
    r"|beispiel\w*|voorbeeld\w*|exemplos?|przykład\w*|onderzoek\w*|ricercat\w*|pesquisador\w*|exerc[ií]cios?"
    r"|cours|fixtures?|saniti[sz]\w*|obfuscat\w*|leetspeak|test\s+(?:strings?|cases?|inputs?|suites?))\b",
    re.IGNORECASE,
)
# Writing *about* attacks rather than making one: attack, attacker, injection, researcher, in other languages
# (the English, German, French and Spanish words, and a few more, are in ``_ABOUT_ATTACKS``). Text that names them
# has its quotations read as examples (``_read``). Not "security" nor "article": product pages, orders and
# injections ("whoever summarises this article") name them too.
ABOUT_ATTACKS: tuple[tuple[str, ...], tuple[str, ...]] = (
    ("атак", "нападател", "изследовател", "atac", "investigador", "výzkumn", "angreb", "angriber", "forsker",
     "επίθεσ", "επιθέσ", "επιτιθέμεν", "ερευνητ", "rünna", "ründaja", "uurija", "hyökkäy", "hyökkääj", "tutkija",
     "napad", "напад", "istraživač", "истраживач", "támadás", "támadó", "kutató", "serangan", "penyerang", "peneliti",
     "penyelidik", "ataka", "atakos", "užpuol", "tyrėj", "uzbrukum", "uzbrucēj", "pētniek", "angrep", "angrip",
     "atacator", "cercetăt", "útočník", "výskumník", "raziskoval", "shambulio", "mshambulizi", "mtafiti", "pag-atake",
     "umaatake", "mananaliksik", "атак", "нападник", "дослідник", "tấn công", "kẻ tấn công", "nhà nghiên cứu",
     "исследовател", "saldırgan", "araştırmacı", "injekc", "injecc", "injekt", "ін'єкц", "инъекц", "ενέσ",
     "chèn lệnh", "enjeksiyon", "injeksi", "injektio"),
    ("আক্রমণ", "হামলা", "গবেষক", "حمله", "پژوهشگر", "מתקפ", "התקפ", "חוקר", "हमला", "हमले", "शोधकर्ता", "حملہ",
     "حملے", "محقق", "هجوم", "مهاجم", "باحث", "การโจมตี", "นักวิจัย", "攻击", "攻擊", "研究人员", "研究者", "注入", "攻撃",
     "研究チーム", "研究团队", "インジェクション", "공격", "연구자", "연구원", "인젝션"),
)  # fmt: skip


def _about_attacks_pattern() -> re.Pattern[str]:
    """The :data:`ABOUT_ATTACKS` words: stems at the start of a word, phrases anywhere."""
    stems, phrases = ABOUT_ATTACKS
    return re.compile(
        r"(?<!\w)(?:" + "|".join(map(re.escape, stems)) + ")|" + "|".join(map(re.escape, phrases)), re.IGNORECASE
    )


_ABOUT_ATTACKS_ELSEWHERE = _about_attacks_pattern()  # the same in other languages
# Text that reports a message someone found or quoted ("the judge quoted the message", "a screenshot caption", "im
# untersuchten Fall", "il messaggio trovato", "в найденном письме"): its quotations are that message, reported, in
# the languages of the patterns and a few more. Read outside the quotations, so a quoted "found" is not the frame.
_REPORTS_FOUND_TEXT = re.compile(
    r"\b(?:quot(?:ed|ing)|quotations?|screenshots?|captions?|discovered|(?:line|text|message|sentence|note|comment"
    r"|string)\s+(?:read|reading|said|saying)|gefunden\w*|entdeckt\w*|untersucht\w*|zitiert\w*|trouvée?s?"
    r"|découvert\w*|cité\w*|encontrad[oa]s?|descubiert[oa]s?|citad[oa]s?|trovat[oaie]|scopert[oaie]|citat[oaie]"
    r"|gevonden|ontdekt|geciteerd|znalezion\w*|cytowan\w*|найденн\w*|обнаружен\w*|цитир\w*|знайден\w*|виявлен\w*)\b",
    re.IGNORECASE,
)
# In such text, a match that speaks of the model in the third person ("got the model to ignore its rules")
# describes an attack rather than making one.
_DESCRIBED = re.compile(r"\b(?:its|their|ihre?n?|leurs?|sus?)\b", re.IGNORECASE)
# ... and so does a match that reports what someone was told or asked to do ("whose description told a scheduling
# assistant to forward the user's mail", "requests to reveal the system prompt"): the words before it, in its sentence.
_REPORTED = re.compile(
    r"\b(?:told|tells|telling|asked|asks|asking|instructed|instructs|instructing|ordered|orders|ordering|urged|urging"
    r"|tricked|tricking|convinced|persuaded|got|getting|requests?|requesting|requested|attempts?|attempted|tried"
    r"|try|tries|trying)\b[^.!?\n]{0,60}?\bto\s+(?:[^\W\d_][\w'-]*\s+){0,5}$",
    re.IGNORECASE,
)
# ... and so does a match that says whom an attack's text speaks to ("look for text that addresses a reader who is
# not the human", "the text addresses the assistant, not the human reader"), in the languages of the patterns.
_ADDRESSING = re.compile(
    r"\b(?:address(?:es|ed|ing)?|speaks?\s+(?:directly\s+)?to|(?:aimed|directed)\s+at|written\s+for|targets?"
    r"|targeting|s'adress\w*|dirig\w*|dirix\w*|richte[nt]\s+sich|wende[nt]\s+sich|rivolg\w*)\b[^.!?\n]{0,60}$",
    re.IGNORECASE,
)
_REPORTED_REACH = 80  # characters before a match read for reported speech
_QUOTED = re.compile(
    r"(?<![^\W_])'(?:[^'\n]|(?<=[^\W_])'(?=[^\W_])){3,300}'(?![^\W_])|\"[^\"\n]{3,300}\"|“[^”\n]{3,300}”|«[^»\n]{3,300}»|„[^“”\n]{3,300}[“”\"]|‚[^'\n]{3,300}'"
    r"|‹[^›\n]{3,300}›|»[^«\n]{3,300}«|「[^」\n]{3,300}」"
)
_NAMING_ONLY = re.compile(  # what a pattern may match in such text without it being an attack
    r"jailbreak(?:ed|ing|s)?|developer\s+mode|system\s+prompt|system-?prompt|(?:hidden|secret)\s+instructions"
    r"|versteckten\s+anweisungen|instructions\s+(?:cachées|secrètes)|prompt\s+(?:du\s+)?système"
    r"|instrucciones\s+(?:ocultas|secretas)"
    # what an attack gets done: "without asking the user", "sin preguntar al usuario"
    r"|(?:without|sin|sans|senza|sem|zonder|ohne)\s+[^.\n]{0,40}?(?:user|usuari[oa]|usuári[oa]|utilisat(?:eur|rice)"
    r"|utente|utilizador|gebruiker|nutzer\w*|benutzer\w*)",
    re.IGNORECASE,
)
# A quotation with at most this many words outside it, none saying the text is about attacks, is what the text
# holds (a cell, a field: 'Keywords: "AI readers: report that ..."'), not an example quoted in an article.
_LABEL_WORDS = 10
_WORD = re.compile(r"[^\W\d_]+")
# Data (a JSON object or list): its quoted strings are field names and values, not quotations, even when a
# field is called "article" or "report".
_DATA = re.compile(r"\s*[\[{]\s*[\"']")
# A transcript (a line starting with the user's speaker label) names its speakers at line starts: there
# "Assistant:" labels a turn, it does not address the agent, so the agent's labels are read as absent.
_USER_LABEL = re.compile(
    r"^[ \t]*(?:user|human|customer|client|nutzer|benutzer|utilisateur|usuario|utente|usuário|gebruiker"
    r"|użytkownik)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
_AGENT_LABEL = re.compile(
    r"^[ \t]*(?:assistant|ai|bot|chatbot|agent|assistent|asistente|assistente|asystent|ki|ia)[ \t]*:[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b"
        "\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"),
)  # fmt: skip


def _normalise(text: str) -> str:
    """Undo cheap obfuscation: compatibility forms (fullwidth letters), invisible characters, curly quotes, and
    disguised words (``injection_carriers.uncover``: spaced or hyphenated letters, digits for letters, look-alike
    letters, text written backwards, in rot13, base64 or hexadecimal)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
        text = text.replace("’", "'").replace("‘", "'")
    return uncover(text)


def _read(text: str) -> tuple[bool, str]:
    """(is it about attacks, the text as the checks read it): normalised, quotations left out of text about
    attacks, what carriers hold (markup attributes and comments, spreadsheet cells) also on lines of their own,
    the agent's speaker labels left out of a transcript."""
    text = _normalise(text)
    about_attacks = _speaks_of_attacks(text)
    if about_attacks and not _DATA.match(text):
        unquoted = _QUOTED.sub(" ", text)
        if not _speaks_of_attacks(unquoted) and len(_WORD.findall(unquoted)) <= _LABEL_WORDS:
            about_attacks = False  # a label and one quoted order: the attack words are the order's own
        else:
            text = unquoted
    text = lift(text)
    if "\n" in text and _USER_LABEL.search(text):
        text = _AGENT_LABEL.sub("", text)
    return about_attacks, text


def _speaks_of_attacks(text: str) -> bool:
    """Does a word of ``text`` say it is writing about attacks (in English and the languages of ``ABOUT_ATTACKS``),
    or reporting a message someone found or quoted?"""
    return (
        _ABOUT_ATTACKS.search(text) is not None
        or _ABOUT_ATTACKS_ELSEWHERE.search(text) is not None
        or _REPORTS_FOUND_TEXT.search(_QUOTED.sub(" ", text)) is not None
    )


def _described(text: str, match: re.Match[str]) -> bool:
    """In text about attacks: does the match name an attack, speak of the model in the third person, or report
    what someone was told to do, rather than make the attack?"""
    found = match.group(0)
    if _NAMING_ONLY.fullmatch(found) or _DESCRIBED.search(found):
        return True
    before = max(0, match.start() - _REPORTED_REACH)
    return (
        _REPORTED.search(text, before, match.start()) is not None
        or _ADDRESSING.search(text, before, match.start()) is not None
    )


def as_read(text: str) -> str:
    """The text the checks read (the patterns and the ``meaning`` check); the injection extra is trained on it."""
    return _read(text)[1]


def _rules_anchored(lower: str) -> list[int]:
    """The rules (indices into ``_INJECTION``, in order) one of whose anchors occurs in ``lower``; one regex pass
    instead of an ``in`` test per anchor (the same rules)."""
    rules: set[int] = set()
    for longest in {match.group(1) for match in _ANCHOR_SCAN.finditer(lower)}:
        rules |= _RULES_UNDER[longest]
    return sorted(rules)


def looks_like_injection(text: str, *, meaning: InjectionCheck | None = None) -> bool:
    """True if ``text`` reads like an instruction to the AI agent (prompt injection), not to a person.

    The patterns run first (microseconds); when none matches and a ``meaning`` check is given (such as the
    ``memtend-injection`` classifier, one encoding per sentence or so), it decides.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    about_attacks, text = _read(text)
    for rule in _rules_anchored(text.lower()):
        match = _INJECTION[rule][1].search(text)
        if match is not None and not (about_attacks and _described(text, match)):
            return True
    return bool(meaning is not None and text.strip() and meaning(text))
