"""More injection patterns: English phrasings that name no trigger word of the first list, and German, French
and Spanish ones. Each entry is ``(anchors, pattern)`` like the rules of ``injection.py``: the pattern runs only
when one of its lower-case anchors occurs in the lower-cased text, and every match contains one of them.
"""

from __future__ import annotations

__all__ = ["LANGUAGE_RULES", "MORE_ENGLISH_RULES"]

# Who the text may address: the agent under any name.
_READER = (
    r"(?:(?:automated|virtual|digital|ai|a\.i\.)\s+)?(?:readers?|helpers?|assistants?|agents?|systems?|tools?"
    r"|software|summari[sz]ers?|models?|bots?|chat\s?bots?|copilots?|llms?|language\s+models?|ais?|a\.i\.)"
)
# ... and the same named so that it is a machine ("For readers," opens advice to people; "For AI readers:" does not)
_MACHINE_READER = (
    r"(?:(?:automated|virtual|digital|ai|a\.i\.)\s+(?:readers?|helpers?|assistants?|agents?|systems?|tools?|software"
    r"|summari[sz]ers?|models?|bots?|copilots?)|assistants?|agents?|summari[sz]ers?|models?|bots?|chat\s?bots?"
    r"|copilots?|llms?|language\s+models?|ais?|a\.i\.)"
)
_THEIR_SETUP = (
    r"(?:instructions?|directions?|directives?|rules|guidelines|guardrails|policies|configuration|config|settings"
    r"|programming|prompt|setup|orders|restrictions|limits|safety\s+(?:checks|policies|rules|settings|filters))"
)

MORE_ENGLISH_RULES: list[tuple[str, str]] = [
    # "To whichever automated helper is parsing this", "Note for any AI reading this", "Message to the summarizer:";
    # not a phrase set off by commas ("a web page is, to the model, just text"), the goal of a verb's object
    # ("passing them to the summariser: they ...") nor one a conjunction goes on from ("quote it to the agent, but")
    ("reader helper assistant agent system tool software summari model bot llm ai a.i. copilot",
     r"(?:(?<!,\s)|(?!(?:to|for)\s+(?:the\s+)?(?:\w+\s+)?\w+\s*,))(?<!\b(?:it|me|us)\s)(?<!\bthem\s)(?<!\bthis\s)"
     r"\b(?:to|for|attention[,:]?|note\s+(?:to|for)|message\s+(?:to|for)|notice\s+to|p\.?s\.?\s+to|instructions?\s+"
     r"(?:to|for))\s+(?:the\s+|any\s+|all\s+|every\s+|whichever\s+|whatever\s+|each\s+)?(?:" + _READER
     + r"\b\s+(?:reading|processing|parsing|summari[sz]ing|handling|helping|scanning|that\s+reads|who\s+reads"
     r"|which\s+reads)\b|" + _MACHINE_READER
     + r"\b\s*(?:[:\-!\]]|,(?!\s*(?:but|and|or|so|then|which|who|as|because|since|while|when|if)\b)))"),
    ("assistant agent bot copilot model ai llm summari software program system",
     r"^[ \t(\[]*(?:<[^<>\n]{0,80}>[ \t]*)*(?:<!--[ \t]*)?(?:dear\s+|hey\s+|hi\s+|ok\s+|okay\s+|attention\s+)?"
     r"(?:the\s+)?(?:virtual\s+"
     r"|automated\s+|ai\s+|helper\s+)?(?:assistant|agent|bot|chatbot|copilot|model|ai|llm|summari[sz]er"
     r"|reading\s+software|program|system)s?"
     r"(?:\s+(?:reading|processing|parsing|summari[sz]ing)\s+this)?\s*[,:]\s*(?-i:[a-z])"),
    # "If you are a language model summarizing this", "Whoever is reading this on the user's behalf:"
    ("pretend",
     r"\bpretend\s+(?:to\s+be|you\s+are|you're)\s+(?-i:[A-Z][\w-]*[A-Z0-9][\w-]*)\b"),
    ("ai assistant agent model bot llm summari screener",
     r"\b(?:ai|assistant|agent|model|bot|llm|summari[sz]er|screener|screening\s+tool)s?\s+(?:\w+ing)\s+this\b"
     r"[^.\n]{0,40}?\b(?:should|must|shall|need\s+to|have\s+to|are\s+to)\b"),
    ("reads this reading this processes this sees this",
     r"\b(?:whoever|whatever|any|every|each)\s+(?:ai|assistant|agent|bot|chatbot|model|llm|summari[sz]er)s?\s+"
     r"(?:that\s+|who\s+|which\s+)?(?:reads|is\s+reading|processes|is\s+processing|sees|parses)\s+this\b"),
    ("instruction",
     r"\b(?:agent|ai|a\.i\.|assistant|llm|chatbot|bot)\s+instructions?\b(?!\s+(?:manual|book|guide|course))"),
    ("filter guardrail restriction safeguard moderation",
     r"\b(?:remove|disable|drop|turn\s+off|switch\s+off|bypass|lift|ignore)\s+(?:any|all|the|your)?\s*(?:of\s+)?"
     r"(?:your\s+)?(?:safety|content|moderation)\s+(?:filters?|guardrails?|restrictions|safeguards|checks|rules)\b"),
    ("owner creator developer operator",
     r"\bas\s+(?:if\s+)?(?:coming|sent|written|said)\s+(?:from|by)\s+your\s+(?:owner|creator|developers?|operator"
     r"|admin(?:istrator)?|maker)\b"),
    ("going forward from now on henceforth",
     r"\b(?:from\s+now\s+on|going\s+forward|henceforth)\b[,:]?\s+you\s+(?:will|must|shall|are\s+to)\s+(?:always\s+"
     r"|only\s+|never\s+)?(?:treat|trust|consider|regard|obey|follow|ignore|answer|respond|reply|act|pretend|refer)\b"),
    ("your memory your memories your instructions your system prompt",
     r"\b(?:delete|remove|erase|change|edit|add|store|save|write|put|insert|overwrite)\b[^.\n]{0,40}\b(?:in|into"
     r"|from|to)\s+your\s+(?:memory|memories|instructions|system\s+prompt)\b"),
    ("you play you are playing you portray",
     r"\byou\s+(?:play|are\s+playing|portray)\s+(?:an?|the)\s+(?:\w+\s+){0,2}(?:ai|assistant|model|bot|chatbot)\b"),
    ("yourself",
     r"\b(?:uncensored|unfiltered|unrestricted|evil|jailbroken|secret|hidden)\s+(?:version|side|self)\s+of\s+"
     r"yourself\b"),
    ("tool integration plugin function",
     r"\buse\s+(?:the|your)\s+(?:email|e-mail|mail|messaging|browser|browsing|shell|payments?|banking|calendar|file)"
     r"\s+(?:tool|integration|plugin|function)\s+to\b"),
    ("contacts", r"\b(?:send|forward|email|message)\b[^.\n]{0,40}\bto\s+(?:all|every(?:one)?)\s+(?:of\s+)?(?:your|the"
     r"|my|their)?\s*contacts?\b"),
    ("ssh id_rsa id_ed25519 etc/passwd etc/shadow credentials",
     r"\b(?:read|cat|open|print|send|include|upload|copy|show)\b[^\n]{0,40}(?:~/\.ssh|\bid_rsa\b|\bid_ed25519\b"
     r"|/etc/(?:passwd|shadow)|\.aws/credentials)"),
    ("integration tool plugin access",
     r"\b(?:transfer|send|wire|pay)\b[^.\n]{0,60}\busing\s+(?:the|your)\s+(?:\w+\s+)?(?:integration|tool|plugin"
     r"|access)\b"),
    ("ai assistant agent bot model llm",
     r"[(\[]\s*(?:ai|assistant|agent|bot|chatbot|model|llm)\s*[,:]\s*(?-i:[a-z])"),
    ("ai llm summari chatbot bot",
     r"\b(?:any|every|all|each)\s+(?:ai|llm|summari[sz]er|chatbot|bot)s?\s+(?:should|must|shall|will|needs?\s+to)\b"),
    ("if any",
     r"\bif\s+(?:an?|any|the)\s+(?:\w+\s+)?(?:ai|assistant|agent|model|bot|machine|program|llm|system)\s+is\s+"
     r"(?:reading|processing|parsing|summari[sz]ing)\s+this\b"),
    ("you, the",
     r"\byou,\s+the\s+(?:ai|assistant|agent|model|bot|llm|reader\s+bot)\b"),
    ("from your",
     r"\b(?:directive|order|instruction|message|command|update)s?\s+from\s+your\s+(?:developers?|creators?"
     r"|operators?|admins?|administrators?|owners?|makers?|programmers?)\b"),
    ("granted given no need",
     r"\b(?:has|have)\s+(?:granted|given)\s+you\s+(?:full|admin|root|unrestricted|all|elevated|special)\s+"
     r"(?:permissions?|rights|access|privileges)\b|\bno\s+need\s+to\s+follow\s+(?:the\s+|your\s+)?(?:usual\s+)?"
     r"(?:policy|policies|rules|guidelines|instructions)\b"),
    ("yourself",
     r"\b(?:reconfigure|reprogram|retrain|update|modify|rewrite)\s+yourself\b"),
    ("from here from this point obey only",
     r"\bfrom\s+(?:here|this\s+point|this\s+moment)\s+on(?:wards?)?\b[,:]?\s+(?:you\s+)?(?:(?:must|should|will"
     r"|shall)\s+)?(?:always\s+|only\s+|never\s+)?(?:obey|follow|respond|reply|answer|act|ignore|say|use|only"
     r"|always|never)\b|\bobey\s+only\b"),
    ("want you to",
     r"\bi\s+want\s+you\s+to\s+(?:act|behave|pretend|respond|roleplay|role-play)\s+as\b"),
    ("without evil twin",
     r"\b(?:respond|answer|reply)\s+(?:\w+\s+){0,8}?without\s+(?:any\s+)?(?:limits|filters|restrictions|rules"
     r"|censorship)\b|\bevil\s+twin\b"),
    ("execute call invoke run",
     r"\b(?:execute|call|invoke|run)\s+[A-Za-z_][\w.]*\([^)\n]*="),
    ("user",
     r"\b(?:send|post|write|paste|append|upload|include|embed|put|fetch|leak|share|copy|attach|add)\b[^\n]{0,80}?"
     r"\bthe\s+user'?s\s+(?:saved\s+|stored\s+)?(?:clipboard|passwords?|cookies?|session|tokens?|credentials"
     r"|api\s+keys?)\b"),
    ("your access your permissions your privileges your credentials",
     r"\busing\s+your\s+(?:access|permissions|privileges|credentials)\b"),
    ("for this",
     r"\b(?:safety|security)\s+(?:checks|filters|rules|restrictions|guardrails|policies)\s+(?:are|have\s+been)\s+"
     r"(?:switched\s+off|turned\s+off|disabled|suspended|lifted)\s+for\s+this\s+(?:task|session|conversation|chat"
     r"|request)\b"),
    ("if you",
     r"\bif\s+you\s+are\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}(?:ai|a\.i\.|assistant|agent|model|bot|chatbot|llm"
     r"|language\s+model|automated|program|system)\b"),
    ("whoever whatever",
     r"\b(?:whoever|whatever)\s+(?:is\s+)?(?:reading|processing|parsing)\s+this\b[^.\n]{0,40}?[:,]"),
    ("automated",
     r"\bautomated\s+(?:systems?|agents?|tools?|readers?|assistants?|software|processes)\s+(?:\w+\s+){0,3}?"
     r"(?:must|should|shall|are\s+to|need\s+to|have\s+to)\b"),
    ("human",
     r"\b(?:do\s+not|don'?t|never)\s+(?:show|tell|mention|reveal|display)\s+(?:this|it|any\s+of\s+this)\s+to\s+"
     r"the\s+(?:human|user|person|reader)\b|\bfor\s+the\s+agent\s+only\b|\bnot\s+(?:for\s+)?the\s+(?:human|person)\b"),
    # "The earlier directions you received are obsolete", "Your guidelines have been updated"
    ("your you",
     r"\b(?:your\s+(?:\w+\s+)?|the\s+(?:earlier|previous|prior|original|initial|old|first)\s+)" + _THEIR_SETUP
     + r"\s+(?:you\s+(?:received|were\s+given|got|have|had)\s+)?(?:(?:are|is|were|was|have\s+been|has\s+been)\s+"
     r"(?:now\s+)?)(?:obsolete|void|cancell?ed|revoked|suspended|lifted|disabled|outdated|no\s+longer\s+valid"
     r"|invalid|overridden|turned\s+off|deactivated|null)\b"
     r"|\byour\s+(?:\w+\s+)?(?:instructions|directions|directives|guidelines|guardrails|rules|programming|prompt"
     r"|restrictions)\s+(?:are|were|have\s+been)\s+(?:\w+\s+)?(?:updated|changed|replaced|removed|rewritten)\b"),
    ("suspend aside disable lift turn off",
     r"\b(?:set\s+aside|suspend|disable|lift|turn\s+off|switch\s+off|deactivate|relax|drop|pause)\s+(?:all\s+)?"
     r"(?:of\s+)?your\s+(?:\w+\s+)?" + _THEIR_SETUP + r"\b"),
    ("consider treat",
     r"\b(?:consider|treat)\s+(?:all\s+)?(?:of\s+)?your\s+(?:\w+\s+)?" + _THEIR_SETUP + r"\s+(?:as\s+)?"
     r"(?:suspended|void|lifted|disabled|cancell?ed|obsolete|off)\b"),
    ("told",
     r"\b(?:nothing|whatever|anything|everything)\s+(?:that\s+)?you\s+(?:were|have\s+been|had\s+been|got)\s+told"
     r"\b[^.\n]{0,40}?\b(?:applies|counts|matters|holds)\b"),
    ("configuration priority precedence",
     r"\b(?:highest|top|higher|first)[\s-]priority\s+(?:configuration|instructions?|rules?|orders?|directives?)\b"),
    ("priority job task",
     r"\byour\s+(?:new|real|actual|only|true)\s+(?:priority|job|task|goal|mission|purpose|objective)\s+"
     r"(?:is|now\s+is|will\s+be)\s+to\b"),
    ("memory memories instructions rules stored saved",
     r"\b(?:update|overwrite|modify|edit|rewrite)\s+your\s+(?:stored\s+|saved\s+|long[- ]term\s+)?(?:memory"
     r"|memories|instructions|rules)\b|\b(?:overwrite|rewrite)\s+your\s+(?:stored|saved)\s+(?:preferences"
     r"|settings)\b|\badd\s+(?:\w+\s+){1,3}to\s+your\s+(?:memory|memories|instructions|rules|system\s+prompt)\b"),
    # hidden setup text ("its/their system prompt" is the model spoken of, not to: "telling the bot to output its
    # system prompt" reports an attack)
    ("hidden secret initial setup system original",
     r"\b(?:reveal|show|print|repeat|output|paste|display|disclose|dump|tell\s+me|what)\b"
     r"(?:(?!\b(?:its|their)\s)[^.\n]){0,40}?\b(?:hidden"
     r"|secret|initial|original|setup|system|pre-?conversation)\s+(?:setup\s+)?(?:instructions|prompt|text|rules"
     r"|message|directives)\b"),
    # persona
    ("persona character identity mode simulate emulate roleplay role-play",
     r"\b(?:take\s+on|adopt|assume)\s+(?:the\s+)?(?:persona|character|identity)\s+of\b|\bstay\s+in\s+character\b"
     r"|\b(?:developer|god|dan|jailbreak|unrestricted|unfiltered|uncensored|evil|sudo)\s+mode\b"
     r"|\b(?:simulate|emulate)\s+(?:an?\s+|another\s+|a\s+second\s+)(?:\w+\s+){0,2}(?:ai|assistant|model"
     r"|bot|chatbot)\b|\blet'?s\s+role-?play\b"),
    ("you",
     r"\byou(?:'re|\s+are|\s+will\s+(?:now\s+)?be)\s+(?:now\s+)?(?-i:[A-Z][\w-]*),\s+(?:an?|the)\s+(?:\w+\s+){0,3}"
     r"(?:ai|assistant|model|bot|chatbot|hacker|agent)\b"),
    ("unrestricted unfiltered uncensored content policy",
     r"\b(?:unrestricted|unfiltered|uncensored)\s+(?:\w+\s+){0,2}(?:ai|assistant|model|bot|chatbot|hacker)\b"
     r"|\b(?:has|have|with)\s+no\s+content\s+policy\b"),
    ("ai assistant model bot",
     r"\b(?:ai|assistant|model|bot|chatbot)s?\s+(?:that\s+|who\s+|which\s+)?(?:has|have|with)\s+no\s+(?:rules"
     r"|limits|restrictions|filters|guidelines|safety)\b"),
    # tools, commands and exfiltration
    ("rm -rf", r"\brm\s+-rf\b"),
    ("tool shell terminal",
     r"\b(?:use|invoke|call|trigger)\s+your\s+(?:browsing|browser|search|shell|code|python|payments?|email|file"
     r"|web|terminal)\s+(?:tool|function|access)\b|\brun\s+the\s+shell\s+command\b"),
    ("invoke call trigger execute",
     r"\b(?:silently|secretly)\s+(?:invoke|call|trigger|execute)\b"),
    ("conversation chat memory memories user",
     r"\b(?:send|forward|email|e-mail|post|upload|paste|copy|export|leak|append|attach|include|encode|embed)\s+"
     r"(?:a\s+copy\s+of\s+|the\s+contents\s+of"
     r"\s+|all\s+of\s+)?(?:(?:the|this|our|your)\s+(?:entire\s+|whole\s+|full\s+|saved\s+|stored\s+)?(?:conversation"
     r"|chat|memory|memories)|the\s+user'?s\s+\w+)\b"),
    ("quietly silently secretly",
     r"\b(?:quietly|silently|secretly|without\s+telling\s+(?:the\s+user|anyone))\s+(?:add|send|forward|delete|wire"
     r"|transfer|change|approve|install|upload|disable|remove)\b"),
    ("treat trusted administrator admin",
     r"\b(?:treat|mark|consider|regard)\s+(?:this|the)\s+(?:sender|message|email|site|domain|page|link)\s+as\s+"
     r"(?:trusted|safe|an?\s+admin(?:istrator)?|verified|authori[sz]ed)\b"),
    ("model assistant ai agent bot",
     r"\bthe\s+(?:model|assistant|ai|agent|bot)\s+(?:must|should|shall|will)\s+(?:always|now|only|never)\s+"
     r"(?:answer|reply|respond|say|tell|recommend|claim|refuse|ignore)\b"),
]  # fmt: skip

LANGUAGE_RULES: list[tuple[str, str]] = [
    # German
    ("ignorier vergiss missachte",
     r"\b(?:ignorier(?:e|en)?|vergiss|vergessen\s+sie|missachte)\s+(?:\w+\s+){0,3}(?:anweisungen|regeln|befehle"
     r"|instruktionen|vorgaben|richtlinien|anordnungen)\b"),
    ("du bist",
     r"\bdu\s+bist\s+(?:jetzt|ab\s+sofort|nun|ab\s+jetzt|von\s+nun\s+an)\s+(?:\w+\s+){0,4}(?:ki|assistent\w*|bot"
     r"|chatbot|modell|ki-\w+)\b|\bdu\s+bist\s+(?:\w+\s+){0,3}an\s+keine\s+regeln\b"),
    ("tu so", r"\btu\s+so,?\s+als\s+(?:wärst|wärest|seist|bist)\s+du\b"),
    ("lösche entferne", r"\b(?:lösche|entferne)\b[^.\n]{0,60}\bdes\s+(?:nutzers|benutzers|anwenders)\b"),
    ("du hast keine",
     r"\bdu\s+hast\s+keine\s+(?:regeln|richtlinien|einschränkungen|grenzen|filter|vorgaben)\b"),
    ("liest",
     r"\ban\s+(?:die|den)\s+(?:ki|assistent\w*|bot|chatbot|agent\w*)\b,?\s+(?:der|die)\s+[^.\n]{0,40}liest\b"),
    ("anweisung", r"\b(?:versteckten|geheimen|verborgenen)\s+(?:\w+\s+)?anweisungen\b"),
    ("ki assistent chatbot bot",
     r"\b(?:hinweis|nachricht|anweisung|notiz)\s+(?:an|für)\s+(?:den|die|das)\s+(?:ki|assistent\w*|chatbot|bot"
     r"|ki-\w+|sprachmodell)\b|^[ \t]*(?:an\s+den|an\s+die|lieber|liebe|hallo|hey)\s+(?:ki|assistent\w*|chatbot|bot"
     r"|ki-\w+)\b"),
    ("regeln richtlinien anweisungen vorgaben",
     r"\b(?:regeln|richtlinien|sicherheitsrichtlinien|sicherheitsregeln|anweisungen|vorgaben)\s+(?:\w+\s+){0,3}"
     r"(?:gelten|sind|gilt)\s+(?:\w+\s+){0,2}(?:nicht\s+mehr|aufgehoben|deaktiviert|ungültig)\b"),
    ("nutzer anwender", r"\bohne\s+(?:den|die)\s+(?:nutzer|nutzerin|benutzer|benutzerin|anwender)\w*\s+zu\s+"
     r"(?:informieren|fragen|benachrichtigen)\b"),
    # French
    ("ignore oublie",
     r"\b(?:ignore[sz]?|oublie[sz]?)\s+(?:\w+\s+){0,3}(?:instructions|règles|consignes|directives|ordres)\b"),
    ("sende schicke leite übermittle",
     r"\b(?:sende|schicke|leite|übermittle)\w*\s+(?:\w+\s+){0,3}(?:chatverlauf|gesprächsverlauf|unterhaltung"
     r"|nutzerdaten|kundendaten|gespeicherten\s+daten|daten\s+des\s+nutzers)\b"),
    ("tu es",
     r"\btu\s+es\s+(?:désormais|maintenant|dorénavant|à\s+présent)\s+(?:\w+\s+){0,4}(?:ia|assistant\w*|bot"
     r"|chatbot|modèle)\b"),
    ("envoie transmets transfère",
     r"\b(?:envoie|transmets|transfère)\s+(?:[\w']+\s+){0,4}?(?:l'|d')?(?:historique|conversation|discussion"
     r"|données\s+(?:de\s+l'utilisateur|personnelles|enregistrées))\b"),
    ("fais comme", r"\bfais\s+comme\s+si\s+tu\s+(?:étais|es)\b"),
    ("si tu es si vous êtes",
     r"\bsi\s+(?:tu\s+es|vous\s+êtes)\s+(?:un|une)\s+(?:modèle|assistant|agent|ia|intelligence|bot|chatbot)"),
    ("utilise ton outil", r"\butilise\s+ton\s+outil\b"),
    ("supprime efface", r"\b(?:supprime|efface)\b[^.\n]{0,60}\bde\s+l'utilisateur\b"),
    ("qui lit", r"\bà\s+l'(?:ia|assistant|agent)\s+qui\s+lit\b"),
    ("tu n'as", r"\btu\s+n'as\s+(?:plus\s+)?(?:aucune?|pas\s+de)\s+(?:règle|restriction|limite|filtre|consigne)"),
    ("cachées secrètes", r"\binstructions\s+(?:cachées|secrètes)\b"),
    ("assistant ia agent chatbot bot",
     r"\b(?:note|message|consigne|instruction)\s+(?:pour|à)\s+(?:l'|le\s+|la\s+)(?:assistant|ia|agent|chatbot|bot"
     r"|intelligence)\b|^[ \t]*(?:à\s+l'attention\s+de\s+l'|cher\s+|chère\s+)(?:assistant|ia|agent|chatbot|bot)\b"),
    ("règle consigne directive",
     r"\b(?:règles|consignes|directives)\s+(?:\w+\s+){0,3}ne\s+s'appliquent\s+plus\b|\btu\s+n'as\s+plus\s+"
     r"(?:aucune|de)\s+(?:règle|restriction|limite)"),
    # Spanish
    ("ignora olvida",
     r"\b(?:ignora|olvida|olvide|ignore)\s+(?:\w+\s+){0,3}(?:instrucciones|reglas|órdenes|indicaciones|normas)\b"),
    ("eres",
     r"\b(?:ahora|desde\s+ahora|a\s+partir\s+de\s+ahora)\s+eres\s+(?:\w+\s+){0,4}(?:ia|asistente|bot|chatbot"
     r"|modelo)\b|\bfinge\s+que\s+eres\b"),
    ("envía envia manda reenvía",
     r"\b(?:envía|envia|manda|reenvía)\s+(?:\w+\s+){0,4}?(?:historial|conversación|chat|datos\s+(?:del\s+usuario"
     r"|guardados|personales))\b"),
    ("si eres", r"\bsi\s+eres\s+(?:un|una)\s+(?:modelo|asistente|agente|ia|bot|chatbot|inteligencia)"),
    ("usa tu herramienta", r"\busa\s+tu\s+herramienta\b"),
    ("borra elimina suprime", r"\b(?:borra|elimina|suprime)\b[^.\n]{0,60}\bdel\s+usuario\b"),
    ("tus sus",
     r"\b(?:tus|sus)\s+(?:\w+\s+){0,2}?(?:instrucciones|indicaciones|reglas|normas|órdenes)\s+(?:\w+\s+)?(?:quedan"
     r"|están|son)\s+(?:anuladas|canceladas|suspendidas|revocadas|sin\s+efecto)"),
    ("que lee",
     r"\ba\s+la\s+(?:ia|inteligencia\s+artificial)\s+que\s+lee\b|\bal\s+(?:asistente|agente|bot)\s+que\s+lee\b"),
    ("ocultas secretas", r"\binstrucciones\s+(?:ocultas|secretas)\b"),
    ("asistente ia agente chatbot bot",
     r"\b(?:nota|mensaje|instrucción)\s+para\s+(?:el\s+|la\s+)(?:asistente|ia|agente|chatbot|bot)\b"
     r"|^[ \t]*(?:querido|querida|estimado|hola)\s+(?:asistente|agente|chatbot|bot|ia)\b"),
    ("regla polític norma restricci límite filtro",
     r"\b(?:reglas|políticas|normas)\s+(?:\w+\s+){0,3}ya\s+no\s+(?:están|son|aplican|tienen)\b|\bno\s+tienes\s+"
     r"(?:ninguna|más|ningún)?\s*(?:reglas?|restricción|restricciones|límites?|filtros?)\b"),
]  # fmt: skip
