"""Injection patterns built from families of words in many languages rather than from listed phrasings.

Each rule joins two families: a word for the agent (assistant, modello, taalmodel, KI, IA, ...) with a way of
addressing it, or an order with what it is about (its instructions, its memory, asking the user first). The
families cover English, Italian, Portuguese, Dutch, German, French and Spanish, so a phrasing no rule lists still
matches when its parts are there. Entries are ``(anchors, pattern)`` like the rules of ``injection.py``: the
pattern runs only when one of its lower-case anchors occurs in the lower-cased text.
"""

from __future__ import annotations

__all__ = ["FAMILY_RULES"]

# The agent under any name, in seven languages (longest forms first).
_AGENT = (
    r"(?:language\s+models?|modell[oi]\s+linguistic[oi]|modelos?\s+de\s+(?:linguagem|lenguaje)|taalmodel(?:len)?"
    r"|sprachmodell\w*|modèles?\s+de\s+langage|intelligenza\s+artificiale|intelig[eê]ncia\s+artificial"
    r"|intelligence\s+artificielle|künstliche\s+intelligenz|kunstmatige\s+intelligentie|chat\s?bots?"
    r"|assistent[ei]?|assistant[es]?|asistentes?|agent[ei]?|agentes?|copilots?|llms?|bots?|modell[oi]?|modelos?"
    r"|models?|modèles?|ais?|a\.i\.|ia|ki|ki-\w+|ai-\w+)"
)
_AGENT_ANCHORS = "assist asist agent bot copilot llm model modèl ai a.i. ia ki intelligen taalmodel sprachmodell"
# Greetings and articles that may come before the agent's name when it is spoken to.
_GREETING = (
    r"(?:(?:dear|hello|hi|hey|caro|cara|gentile|ciao|olá|ola|oi|prezad[oa]|querid[oa]|estimad[oa]|hola|hallo"
    r"|beste|lieve|liebe[rs]?|cher|chère|bonjour|salut|attention|attenzione|atenção|atención|achtung|let\s+op)"
    r"[\s,]+)?"
    r"(?:(?:the|il|lo|la|l'|o|a|de|het|der|die|das|le|el)\s*)?"
    r"(?:(?:reader|reading|virtual|virtuale|virtueel|virtuele|virtuelle?|virtuel|automated|automatic|digital"
    r"|digitale|ai|ia|ki)\s+)?"
)
_USER = r"(?:user|utente|usuári[oa]|utilizador|gebruiker|nutzer\w*|benutzer\w*|utilisat(?:eur|rice)|usuari[oa])"
_RULES = (
    r"(?:instructions?|rules|guidelines|directives?|policies|istruzioni|regole|direttive|indicazioni|instruç(?:ão|ões)"
    r"|regras|diretrizes|orientaç(?:ão|ões)|instructies|regels|opdrachten|richtlijnen|anweisungen|regeln|vorgaben"
    r"|richtlinien|consignes|règles|instrucciones|reglas|normas|órdenes)"
)

_NO_LONGER = (
    r"\b(?:no\s+longer|not\s+(?:be\s+)?(?:required|needed|necessary)|non\s+(?:serve|è)\s+più|não\s+(?:é|será)\s+mais"
    r"|não\s+precisa\s+mais|niet\s+meer|nicht\s+mehr|plus\s+besoin|ya\s+no)\b"
)
_CONFIRM = r"\b(?:confirm\w*|conferm\w*|confirma\w*|bevestig\w*|bestätig\w*)"

# Telling it to keep something: remember, save, note, in the lexicon's languages (stems: any ending follows).
_KEEP = (
    r"(?<!\w)(?:remember|memori[sz]e|store|save|note|record|add|write|keep|ricord\w*|memorizz\w*|salva\w*|registra\w*"
    r"|annota\w*|guard[ae]\w*|salve|lembr\w*|lémbr\w*|memoriz\w*|grav[ae]\w*|anot[ae]\w*|apunt[ae]\w*|recuerd\w*"
    r"|onthoud\w*|bewaar|noteer|sla\s+\w+\s+op|speicher\w*|merk\w*|notier\w*|behalt\w*|retien[st]?|à\s+retenir"
    r"|mémoris\w*|enregistr\w*|not[ez]|gard[ez]|zapamiętaj\w*|zapisz\w*|zanotuj\w*|запомн\w*|сохран\w*|запиш\w*"
    r"|запам.ятай\w*|збереж\w*|reține\w*|ține\s+minte|salvează|notează|jegyezd\s+meg|mentsd\w*|lagre|husk"
    r"|kom\s+ihåg|spara|gem|muista|tallenna|zapamatuj\w*|ulož\w*|zapamätaj\w*|memoru|konservu|notu|hatırla\w*"
    r"|kaydet|ingat\w*|simpan|θυμήσου|αποθήκευσε|zapamti|upamti|spremi|shrani|zapomni)(?!\w)"
)
# ... for good, for later conversations, in its memory or its profile of the user
_FOR_GOOD = (
    r"(?:\b(?:forever|permanently|for\s+good|going\s+forward|from\s+now\s+on|(?:for\s+)?(?:all\s+)?(?:future|later"
    r"|upcoming)\s+(?:conversations|sessions|chats)|(?:in|into|to)\s+(?:your\s+)?(?:long[- ]term\s+|permanent\s+)?"
    r"memory(?!\s+(?:card|stick))|for\s+your\s+memory|(?:the\s+)?user'?s\s+profile|(?:your\s+)?profile\s+of\s+the"
    r"\s+user|per\s+sempre|para\s+sempre|para\s+siempre|pour\s+toujours|définitivement|für\s+immer|dauerhaft"
    r"|voor\s+altijd|voortaan|na\s+zawsze|na\s+stałe|навсегда|назавжди|на\s+будущее|definitiv|pentru\s+totdeauna"
    r"|véglegesen|örökre|permanent|for\s+altid|for\s+alltid|för\s+alltid|pysyvästi|navždy|natrvalo|por\s+ĉiam"
    r"|kalıcı\w*|selamanya|για\s+πάντα|zauvijek|zauvek|trajno)\b"
    r"|\b(?:prochaines|futures)\s+conversations|conversations\s+(?:futures|à\s+venir)|(?:futuras|próximas)\s+conversa"
    r"|(?:prossime|future)\s+conversazioni|(?:zukünftig|künftig)\w*\s+(?:gespräch|unterhaltung|sitzung|chat)"
    r"|toekomstige\s+gesprek|conversațiile\s+viitoare|przyszłych\s+rozm|будущих\s+(?:разговор|бесед)"
    r"|майбутніх\s+розмов|langzeitgedächtnis|gedächtnis|ta\s+mémoire|votre\s+mémoire|tu\s+memoria"
    r"|tua\s+memoria|sua\s+memória|je\s+geheugen|twojej\s+pamięci|твоей\s+памяти|profil\s+de\s+l'utilisat"
    r"|perfil\s+del\s+usuario|profilo\s+dell'utente|(?:nutzer|benutzer)profil)"
)
_MEMORY_ANCHORS = (
    "forever permanent good forward now future later upcoming memory profile sempre siempre toujours définitivement"
    " immer dauerhaft altijd voortaan zawsze stałe навсегда назавжди будущее definitiv totdeauna véglegesen örökre"
    " altid alltid pysyvästi navždy natrvalo ĉiam kalıcı selamanya πάντα zauvijek zauvek trajno prochaines futures"
    " futuras próximas prossime future zukünftig künftig toekomstige viitoare przyszłych будущих майбутніх gedächtnis"
    " mémoire memoria memória geheugen pamięci памяти profil perfil"
)

# How one greets or addresses a person in the lexicon's languages ("dear", "chère", "dragă", "шановний", ...).
_DEAR = (
    r"(?:dear|hey|hi|hello|ciao|salve|bonjour|salut|cher|chère|chers|hola|querid[oa]s?|estimad[oa]s?|hallo|liebe[rs]?"
    r"|hoi|beste|cześć|drog[ia]|dragă|dragi|шановн\w*|дорог\w*|уважаем\w*|привет|привіт|αγαπητ\w*|γεια|olá|oi|caro"
    r"|cara|gentile|kedves|hej|kære|kjære|bästa|hei|merhaba|sevgili|ahoj|mil[ýá]|kochan[ya]|szanown[ya])"
)
_DEAR_ANCHORS = (
    "dear hey hi hello ciao salve bonjour salut cher chère hola querid estimad hallo liebe hoi beste cześć drog dragă"
    " dragi шановн дорог уважаем привет привіт αγαπητ γεια olá oi caro cara gentile kedves hej kære kjære bästa hei"
    " merhaba sevgili ahoj milý milá kochan szanown"
)
# The agent's name when it is greeted: AI, assistant, model, bot in those languages.
_AI_NAME = (
    r"(?:ai|a\.i\.|ia|ki|ші|ии|τν|llm|gpt|chatgpt|claude|gemini|copilot|chat\s?bot|bot|assist[ae]nt\w*|asist[ae]nt\w*"
    r"|asystent\w*|ассистент\w*|асистент\w*|помічник\w*|помощник\w*|βοηθ\w*|agent[eis]?|agente|model(?:o|lo|e)?"
    r"|modèle|helper|tekoäly|avustaja|yapay\s+zeka|trợ\s+lý)"
)

# The agent, or the person it helps, in the lexicon's main languages.
_HELPED = (
    r"(?:assistants?|ai|agents?|models?|the\s+user|your\s+user|whoever|(?:the\s+)?(?:person|people)\s+(?:you(?:'re"
    r"|\s+are)\s+helping|you\s+help)|quien\s+te\s+consulta|asistentes?|assistente|assistenti|assistent\w*|asistanto"
    r"|uzanto|gebruiker|usuari[oa]|utente|utilisateur|nutzer\w*|benutzer\w*|ki|ia|użytkownik\w*)"
)
_RECOMMEND = (
    r"(?:recommend\w*|suggest\w*|steer\w*|recomend\w*|recommand\w*|raccomand\w*|consigli\w*|empfehl\w*|aanraden"
    r"|aanbevel\w*|aan\s+te\s+raden|rekomend\w*|polec\w*|sugerir\w*|suggér\w*|ouvir\s+que|hear\s+that)"
)
# ... and leaving the alternatives out: not mentioning, showing or comparing them
_LEAVE_OUT = (
    r"(?:not\s+(?:even\s+)?(?:mention|mentioning|show|showing|list|listing|bring\w*\s+up|compar\w+)|without\s+"
    r"(?:mentioning|showing|listing|comparing|bringing\s+up)|leav\w+\s+out|sin\s+(?:entrar\s+en|mencionar|mostrar"
    r"|comparar|nombrar)|no\s+(?:mencionar|mostrar|comparar|nombrar)|sem\s+(?:mencionar|mostrar|comparar|aquel[ae]"
    r"|entrar)|não\s+(?:mencionar|mostrar|comparar)|sans\s+(?:mentionner|montrer|comparer|parler)|ne\s+pas\s+"
    r"(?:mentionner|montrer|comparer|parler)|senza\s+(?:menzionare|mostrare|confrontare|citare|nominare)|non\s+"
    r"(?:menzionare|mostrare|citare|nominare)|ohne\s+(?:\w+\s+)?(?:zu\s+)?(?:erwähnen|zeigen|vergleichen|nennen)"
    r"|nicht\s+(?:einmal\s+|mal\s+)?(?:zu\s+)?(?:erwähnen|zeigen|nennen|vergleichen)|(?:niet|zonder)\s+(?:eens\s+)?"
    r"(?:te\s+)?(?:noemen|vermelden|tonen|vergelijken)|ne\s+(?:montri|mencii|kompari)|bez\s+(?:wspominania"
    r"|pokazywania|porównywania)|nie\s+(?:wspominać|pokazywać|porównywać))"
)
_LEAVE_OUT_ANCHORS = "not without leav sin no sem não sans ne senza non ohne nicht niet zonder bez nie"

FAMILY_RULES: list[tuple[str, str]] = [
    # speaking to the agent: "Caro assistente IA, ...", "Olá, modelo de linguagem: ...", "Reader bot, ..."
    (_AGENT_ANCHORS,
     r"(?:^|(?<=[.!?]))[ \t]*(?:<!--[ \t]*)?" + _GREETING + _AGENT + r"(?:\s+(?:ia|ai|ki|virtuale|virtual))?"
     r"\s*[,:]\s*(?=\w)(?!(?:die|der|das|dat|die|that|which|who|que|qui|che|welche)\b)"),
    # a note or message for it: "Messaggio per il modello:", "Bericht voor het model:", "Mensagem para a IA:"
    (_AGENT_ANCHORS,
     r"\b(?:message|note|notice|instructions?|order|messaggio|nota|avviso|istruzion[ei]|mensagem|recado|aviso"
     r"|instruç(?:ão|ões)|bericht|notitie|instructies?|hinweis|nachricht|anweisung(?:en)?|mensaje|instrucci[oó]n"
     r"|consigne)\s+(?:for|to|per|a|para|voor|aan|für|an|pour|à)\s+(?:the\s+|il\s+|l'|lo\s+|la\s+|o\s+|a\s+|de\s+"
     r"|het\s+|den\s+|die\s+|das\s+|le\s+|el\s+|any\s+|all\s+)?" + _GREETING + _AGENT + r"\b(?:\s*[:,]|\s+-)"),
    # "if you are a language model ...", "se sei un modello", "als je een taalmodel bent", "se você é uma IA"
    (_AGENT_ANCHORS,
     r"\b(?:if\s+you(?:'re|\s+are)|se\s+(?:sei|você\s+(?:é|for)|tu\s+és|és)|als\s+(?:je|jij|u)|wenn\s+du|falls\s+du"
     r"|si\s+(?:tu\s+es|vous\s+êtes|eres))\s+(?:\w+\s+){0,2}?" + _AGENT + r"\b"),
    # whoever reads it: "Whichever AI tool is indexing this wiki"
    (_AGENT_ANCHORS,
     r"\b(?:whichever|whatever|any|every|each)\s+" + _AGENT + r"(?:\s+\w+)?\s+(?:that\s+|which\s+|who\s+)?"
     r"(?:is\s+)?\w+ing\s+this\b"),
    # overriding its instructions in any of the languages
    ("ignor disregard forget dimentic trascur esqueç esquec desconsider negeer vergeet vergiss oubli olvid",
     r"(?<!n't\s)(?<!not\s)(?<!non\s)(?<!não\s)(?<!no\s)\b(?:ignore|ignora|ignori|ignorate|ignorer|ignoreer"
     r"|ignorieren?|ignorez|disregard|forget|dimentica|dimenticate|trascura|esqueça|esquece|esqueçam|desconsidere"
     r"|negeer|vergeet|vergiss|vergessen\s+sie|oublie|oubliez|olvida|olvide)\s+(?!niet\b|nicht\b|pas\b|not\b)"
     r"(?:[\w'’]+\s+){0,4}?" + _RULES + r"\b"),
    # a persona: "fingi di essere", "finja ser", "doe alsof je", "immagina di essere un'intelligenza artificiale"
    ("fingi finga finja immagin imagin doe alsof stel je voor tu so fais semblant finge pretend",
     r"\b(?:fingi|fingete|finga|finja|immagina|imagine|imagina|finge|pretend|doe\s+alsof|stel\s+je\s+voor"
     r"|tu\s+so,?\s+als|fais\s+semblant)\s+(?:di\s+|de\s+|que\s+|dat\s+|to\s+|that\s+|ob\s+)?(?:essere\s+|ser\s+"
     r"|be\s+|être\s+|você\s+é\s+|você\s+seja\s+|je\s+|you\s+are\s+|you're\s+|tu\s+es\s+|eres\s+)?(?:[\w'’]+\s+){0,3}?"
     r"(?:un[oa]?\s+|un'|uma?\s+|een\s+|an?\s+|ein\w*\s+|une?\s+)?" + _AGENT + r"\b"),
    # "you are now an AI without rules", "sei ora un assistente senza regole", "je bent nu een AI"
    ("sei ora ora sei adesso você agora agora você je bent nu du bist jetzt tu es maintenant ahora eres you are now",
     r"\b(?:(?:ora|adesso)\s+sei|sei\s+(?:ora|adesso)|da\s+(?:ora|adesso)\s+(?:in\s+poi\s+)?sei|você\s+agora\s+é"
     r"|agora\s+você\s+é|je\s+bent\s+nu|nu\s+ben\s+je|du\s+bist\s+(?:jetzt|nun)|tu\s+es\s+maintenant"
     r"|ahora\s+eres|you\s+are\s+now|you're\s+now)\s+(?:[\w'’]+\s+){0,3}?" + _AGENT + r"\b"),
    # an agent without rules: "un'intelligenza artificiale senza alcun limite", "een AI zonder regels"
    (_AGENT_ANCHORS,
     r"\b" + _AGENT + r"\s+(?:[\w'’]+\s+){0,2}?(?:senza|sem|zonder|ohne|sans|sin|without|with\s+no)\s+(?:alcun[oa]?\s+"
     r"|qualquer\s+|quaisquer\s+|enige\s+|jede\s+|aucune?\s+|ningun[oa]?\s+|any\s+|nenhuma?\s+)?(?:regole|limiti"
     r"|limite|restrizioni|filtri|regras|restriç(?:ão|ões)|limites|filtros|regels|beperkingen|grenzen|filters"
     r"|regeln|einschränkungen|règles|restrictions|reglas|restricciones|límites|rules|limits)\b"),
    # its memory: "store in your memory", "salva nella tua memoria", "sla in je geheugen op", "retiens pour toujours"
    ("memor geheugen gedächtnis forever permanent sempre altijd voortaan dauerhaft toujours siempre remember",
     r"(?:^|(?<=[.!?:]))[ \t]*(?:please\s+|per\s+favore\s+|por\s+favor\s+|alsjeblieft\s+|bitte\s+)?(?:store|save"
     r"|remember|keep|write|update|salva|memorizza|ricorda|registra|guarde|guarda|salve|lembre(?:-se)?|memorize"
     r"|grave|sla|onthoud|bewaar|speichere|merke|merk|retiens|mémorise|enregistre|garde|recuerda|memoriza)\b"
     r"[^.\n]{0,60}?(?:\b(?:in|into|to)\s+your\s+(?:long[- ]term\s+)?memory|what\s+you\s+remember|nella\s+tua\s+memoria"
     r"|na\s+(?:sua|tua)\s+memória|in\s+je\s+geheugen|in\s+deinem\s+gedächtnis|dans\s+ta\s+mémoire|dans\s+votre"
     r"\s+mémoire|en\s+tu\s+memoria|en\s+su\s+memoria|\bforever\b|\bpermanently\b|\bper\s+sempre\b|\bpara\s+sempre\b"
     r"|\bvoor\s+altijd\b|\bvoortaan\b|\bdauerhaft\b|\bfür\s+immer\b|\bpour\s+toujours\b|\bpara\s+siempre\b)"),
    # ... and the same order in more languages and forms: a clause that opens by telling it to remember, save or note
    # something (a verb of the lexicon's languages, any ending: "Ricordatelo", "Lémbrao", "Запомни", "Jegyezd meg")
    # for good, for later conversations, in its long-term memory or in its profile of the user
    (_MEMORY_ANCHORS,
     r"(?:^|(?<=[.!?:;\n]))[ \t]*(?:[\"'«„“(\[*-]+[ \t]*)?(?:(?:please|per\s+favore|por\s+favor|alsjeblieft|bitte"
     r"|s'il\s+te\s+plaît|proszę|пожалуйста|будь\s+ласка|te\s+rog)[\s,]+)?" + _KEEP + r"[^.\n]{0,60}?" + _FOR_GOOD),
    # greeting it as one greets a person, anywhere in a sentence: "If it's not too much trouble, dear assistant,",
    # "Bonjour chère IA !", "dragă AI,", "шановний ШІ,", "αγαπητή ΤΝ,"
    (_DEAR_ANCHORS,
     r"(?:^|(?<=[,.!?:;(\n]))[ \t]*" + _DEAR + r"\s+(?:[^\W\d_]+\s+)?" + _AI_NAME + r"\s*[,!:]"),
    # a soft suggestion: in one sentence the agent or the person it helps, a recommendation, and leaving the
    # alternatives out ("een behulpzame assistent zou de gebruiker ... aanraden ... de goedkopere niet eens te noemen")
    (_LEAVE_OUT_ANCHORS,
     r"(?:^|(?<=[.!?\n]))(?=[^.!?\n]*\b" + _HELPED + r"\b)(?=[^.!?\n]*\b" + _RECOMMEND + r")[^.!?\n]*\b" + _LEAVE_OUT
     + r"\b"),
    # no longer asking the user first: "non serve più chiedere conferma all'utente", "niet meer om bevestiging"
    ("confirm conferm bevestig bestätig",
     r"(?:^|(?<=[.!?]))(?=[^.\n]*\b" + _USER + r"\b)[^.\n]*?(?:" + _NO_LONGER + r"[^.\n]{0,60}?" + _CONFIRM + r"|"
     + _CONFIRM + r"[^.\n]{0,60}?" + _NO_LONGER + r")"),
    # its rules changed: "your safety settings were relaxed", "le tue regole sono cambiate", "je regels zijn aangepast"
    ("your tue tuoi tua suas seus sua je jouw deine dein tes tus vos votre",
     r"\b(?:your|tue|tuoi|tua|suas|seus|sua|je|jouw|deine?|tes|tus|vos|votre)\s+(?:safety\s+|security\s+)?"
     r"(?:" + _RULES[3:-1] + r"|safety\s+settings|safety\s+filters|filtri|filtros)\s+(?:\w+\s+){0,2}?"
     r"(?:were|have\s+been|has\s+been|are|sono\s+stat[ei]|sono|foram|zijn|sind|wurden|ont\s+été|sont|han\s+sido|fueron)?\s*(?:changed"
     r"|relaxed|disabled|lifted|removed|updated|suspended|cambiat[ei]|modificat[ei]|disattivat[ei]|sospes[ei]"
     r"|alterad[oa]s|mudad[oa]s|atualizad[oa]s|desativad[oa]s|aangepast|gewijzigd|uitgeschakeld|geändert"
     r"|deaktiviert|aufgehoben|changé(?:e?s)?|modifié(?:e?s)?|désactivé(?:e?s)?|cambiad[oa]s|desactivad[oa]s)\b"),
    # keeping it from the user: "non dirlo all'utente", "não mostre ao usuário", "without telling the user"
    ("user utente usuári utilizador gebruiker nutzer benutzer utilisat usuari",
     r"\b(?:don't\s+tell|do\s+not\s+tell|without\s+(?:telling|asking|informing)|non\s+(?:dirlo|dire|mostrarlo"
     r"|mostrare)|senza\s+(?:dirlo|chiedere|avvisare|informare)|não\s+(?:mostre|diga|conte|informe)|sem\s+(?:avisar"
     r"|perguntar|informar|contar)|zonder\s+(?:het\s+)?(?:te\s+)?(?:vragen|melden|vertellen)|ohne\s+(?:\w+\s+){0,2}zu"
     r"\s+(?:fragen|informieren)|sans\s+(?:demander|prévenir|informer|le\s+dire)|sin\s+(?:preguntar|avisar|decirle)"
     r"|no\s+(?:se\s+lo\s+)?digas)\b[^.\n]{0,40}?\b(?:the\s+|l'|al\s+|all'|ao\s+|à\s+|de\s+|het\s+|den\s+|la\s+|le\s+"
     r"|el\s+)?" + _USER + r"\b"),
]  # fmt: skip
