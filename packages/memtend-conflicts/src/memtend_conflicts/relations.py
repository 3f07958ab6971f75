"""Relations named in languages other than English ("meine Schwester", "ma sœur", "мой брат", "我的妹妹"), for telling
a change of the user's own thing from news about somebody else ("Meine Schwester ist nach Berlin gezogen" does not
replace "Ich wohne in Paris"). English relations are read by ``words.people``; each relation here is named by
its English word, so one person said in two languages, or in two forms of one, is one person.

A broad list of languages a user may write in: German, Dutch, Swedish, Danish, Norwegian, Finnish, French, Spanish,
Catalan, Italian, Portuguese, Romanian, Polish, Czech, Hungarian, Turkish, Russian, Ukrainian, Greek, Indonesian,
Vietnamese, Japanese, Chinese and Korean. Words that are also common English words ("far", "man", "barn", "nine")
and words that are mostly used as "you" or "I" (Vietnamese "anh", "em") are left out, and so are words a name's
title shares ("Frau", "Mme") and English look-alikes ("mere", "Germans", "sore", "fill"). What the list was written
and checked on is in ``tests/benchmarks/RESULTS.md``. Pure: the standard library only.
"""

from __future__ import annotations

import re

__all__ = ["RELATIONS", "relations_named"]

# relation -> its word forms, one regular expression (case-insensitive; ``\w*`` for languages that inflect by
# endings); then the forms in scripts written without spaces between words, matched as they stand
RELATIONS: dict[str, str] = {
    "sister": (
        r"schwester\w*|zus|zuster|syster\w*|systrar\w*|søster\w*|sisko\w*|sisar\w*|s(?:œ|oe)urs?|hermanas?|"
        r"germana|germanes|sorell[ae]|irmãs?|sor(?:a|ă|ei)|siostr\w*|sestr\w*|nővér\w*|húg\w*|kız kardeş\w*|"
        r"abla(?:m|sı)?|сестр\w*|αδ[εe]λφή\w*|αδερφή\w*|chị gái|em gái|kakak perempuan|adik perempuan"
    ),
    "brother": (
        r"bruder|brüder\w*|broer\w*|bror|bröder\w*|brødre\w*|veli|velje\w*|frères?|hermanos?|germà|"
        r"fratell[oi]|irmãos?|frate(?:le)?|fraţi|brat(?:a|u|em|rem|ři|ra|rovi)?|bratr\w*|öcs\w*|bátyj\w*|"
        r"erkek kardeş\w*|ağabey\w*|брат\w*|αδ[εe]λφός|αδερφός|anh trai|em trai|kakak laki-laki|adik laki-laki"
    ),
    "mother": (
        r"mutter|mama|mamma|mamá|mamã|moeder|mødre|äiti\w*|mère|madre|mãe|mam[aăeyą]|matk\w*|máma|anyá\w*|"
        r"anyu\w*|anne(?:m|si|me|mi)|мам\w*|мать|матер\w*|мати|μητέρα\w*|μαμά|mẹ|ibu saya"
    ),
    "father": (
        r"vater|väter|papa|pappa|papá|vader|isä\w*|père|padre|pai|tat[aăyę]|tatăl|otec|otc(?:e|i|em)|táta|"
        r"apá\w*|apu|apja|bab(?:am|ası|ama)|пап\w*|отец|отц\w*|тат\w*|батьк\w*|πατέρα\w*|μπαμπά\w*|bố|"
        r"ayah saya"
    ),
    "wife": (
        r"ehefrau\w*|meine frau|mijn vrouw|min fru|min kone|vaimo\w*|ma femme|esposa|mi mujer|moglie|soți[ae]|"
        r"soție|żon\w*|manželk\w*|feleség\w*|karım|eşim|жена|жене|жену|женой|жены|дружин\w*|γυναίκα μου|vợ|"
        r"istri"
    ),
    "husband": (
        r"ehemann\w*|mein mann|mijn man|min man|ektemann\w*|min mand|mieheni|mon mari|esposo|marido|marit|"
        r"marito|soțul|soț|mąż|męż\w*|manžel(?:a|em|ovi)?|férj\w*|kocam|муж|мужа|мужем|муже|"
        r"чолов(?:ік|іка|іком) ?мій|σύζυγ\w*|άντρας μου|chồng|suami"
    ),
    "son": (
        r"sohn|söhne\w*|zoon|sønn?|poika\w*|poja\w*|fils|hijos?|figli[oa]?|filhos?|fiul|syn(?:a|em|owi|u|ové)?|"
        r"fiam|oğl\w*|сын\w*|син(?:а|у|ом)?|γιος|γιο|con trai|anak laki-laki"
    ),
    "daughter": (
        r"tochter|töchter\w*|dochter|dotter|döttrar|datter|tytär\w*|tyttäre\w*|fille|hija|filla|figlia|filha|"
        r"fiica|córk\w*|córc\w*|dcer\w*|lány\w*|kızım|доч\w*|доньк\w*|κόρη|con gái|anak perempuan"
    ),
    "neighbour": (
        r"nachbar\w*|buurman|buurvrouw|buren|grann(?:e|en|ar|arna)|nabo\w*|naapuri\w*|voisin\w*|vecin[oa]s?|"
        r"veïn[as]?|vicin[oa] di casa|vizinh[oa]s?|vecin\w*|sąsiad\w*|soused\w*|szomszéd\w*|komşu\w*|сосед\w*|"
        r"сусід\w*|γείτον\w*|hàng xóm|tetangga"
    ),
    "friend": (
        r"freund\w*|vriend\w*|vän(?:nen|ner|nerna|ninna)?|kompis\w*|venn\w*|veninde|ystävä\w*|kaveri\w*|"
        r"amie?s?|amig[oa]s?|amic[ah]?|amic[io]|prieten\w*|przyjaci\w*|kamarád\w*|přítel\w*|barát\w*|"
        r"arkadaş\w*|друг|друга|другу|другом|друз\w*|подруг\w*|φίλ[οηε]\w*|bạn tôi|teman"
    ),
    "colleague": (
        r"kolleg\w*|collega|colleghi|kollega\w*|kollegor|työkaveri\w*|coll[èe]gues?|colegas?|compa[ñn]er[oa]s?|"
        r"koleg\w*|koleżank\w*|kolléga\w*|meslektaş\w*|коллег\w*|колег\w*|συνάδελφ\w*|đồng nghiệp|rekan kerja"
    ),
    "boss": (
        r"chefin|sjef\w*|pomo(?:ni|lle|n)?|jef[ea]|szef\w*|šéf\w*|șef\w*|főnök\w*|начальни\w*|шеф\w*|αφεντικό|"
        r"sếp|bos saya"
    ),
    "parent": (
        r"eltern|ouders|föräldrar\w*|foreldre\w*|forældre\w*|vanhemma\w*|padres|genitori|pais|părinți\w*|"
        r"rodzic\w*|rodiče|szüleim|szülők|родител\w*|батьки|γονείς|bố mẹ|orang tua"
    ),
    "partner": (
        r"partnerin|sambo\w*|samboer\w*|kumppani\w*|compagn[oae]|compagnon|copain|copine|pareja|novi[oa]|"
        r"fidanzat[oa]|companheir[oa]|partnerk\w*|партн[её]р\w*|σύντροφ\w*"
    ),
    "kid": (
        r"kindern|kinderen|enfants|niños|bambini|crianças|copiii|dzieci|děti|gyerek\w*|çocuk\w*|дети|детей|"
        r"діти|дітей|παιδιά"
    ),
    "grandmother": (
        r"oma|mormor|farmor|bestemor|mummo\w*|grand-m[èe]re|abuela|nonna|avó|bunic[aă]|babci\w*|babičk\w*|"
        r"nagymam\w*|büyükanne\w*|бабушк\w*|бабус\w*|γιαγιά"
    ),
    "grandfather": (
        r"opa|morfar|farfar|bestefar|grand-p[èe]re|abuelo|nonno|avô|bunicul|dziad\w*|dědeč\w*|nagypap\w*|"
        r"büyükbaba\w*|дедушк\w*|дідус\w*|παππού\w*"
    ),
    "cousin": (
        r"cousin[es]?|kusine\w*|vetter\w*|neef|kusin\w*|fætter\w*|fetter\w*|serkku\w*|prim[oa]s?|cugin[oaie]|"
        r"văr(?:ul|ului)?|verișoar\w+|kuzyn\w*|bratran\w*|sestřenic\w*|unokatestvér\w*|kuzen\w*|двоюродн\w+|"
        r"двоюрідн\w+|кузен\w*|кузин\w*|ξ[αά]δ[εέ]ρφ\w+|sepupu|anh họ|chị họ|em họ"
    ),
    "uncle": (
        r"onkel\w*|oom|farbror|morbror|setä\w*|oncles?|tío|tíos|zio|zii|unchi\w*|wuj\w*|stryj\w*|strýc\w*|"
        r"strejd\w*|nagybáty\w*|amca\w*|dayı\w*|дяд\w+|дядьк\w*|θείος|θείο|paman"
    ),
    "aunt": (
        r"tante\w*|moster|täti\w*|tía|tías|zia|mătuș\w+|ciotk\w*|cioci\w*|nagynéni\w*|teyze\w*|"
        r"тёт\w+|тет(?:я|и|е|ю|ей)|тітк\w*|θεία|bibi"
    ),
    "nephew": r"neffe\w*|neveu\w*|sobrin[oa]s?|sobrinh[oa]s?|bratan\w*|siostrzen\w*|племянни\w+|yeğen\w*",
    "niece": r"nichte\w*|nichtje|nièces?",
    "grandchild": r"enkel(?:in|kind\w*|sohn|tochter|n)|petit-fils|petite-fille|petits-enfants|niet[oa]s?|wnuk\w*|"
    r"wnucz\w*|внук\w*|внучк\w*|onuk\w*|torun\w*",
}
_UNSPACED: dict[str, tuple[str, ...]] = {
    "sister": ("姉", "妹", "姐姐", "언니", "누나"),
    "brother": ("兄", "弟", "哥哥", "오빠", "남동생"),
    "mother": ("母", "妈妈", "엄마", "어머니"),
    "father": ("父", "爸爸", "아빠", "아버지"),
    "wife": ("妻", "老婆", "아내"),
    "husband": ("丈夫", "老公", "남편", "夫が", "夫は", "主人"),
    "son": ("息子", "儿子", "아들"),
    "daughter": ("娘", "女儿"),
    "neighbour": ("隣人", "隣の", "邻居", "이웃"),
    "friend": ("友達", "友人", "朋友", "친구"),
    "colleague": ("同僚", "同事", "동료"),
    "boss": ("上司", "老板", "상사"),
    "parent": ("両親", "父母", "부모님"),
    "cousin": (
        "いとこ",
        "従兄",
        "従姉",
        "従弟",
        "従妹",
        "表哥",
        "表姐",
        "表弟",
        "表妹",
        "堂哥",
        "堂姐",
        "堂弟",
        "堂妹",
        "사촌",
    ),
    "uncle": ("叔父", "伯父", "おじさん", "叔叔", "舅舅", "伯伯", "삼촌"),
    "aunt": ("叔母", "伯母", "おばさん", "阿姨", "姑姑", "이모", "고모"),
    "nephew": ("甥", "侄子", "外甥", "조카"),
    "niece": ("姪", "侄女", "外甥女"),
    "grandchild": ("孫", "손자", "손녀"),
}

_FINDERS = {
    relation: re.compile(
        rf"(?<![\w-])(?:{forms})(?![\w-])" + "".join("|" + re.escape(word) for word in _UNSPACED.get(relation, ())),
        re.IGNORECASE,
    )
    for relation, forms in RELATIONS.items()
}


def relations_named(text: str) -> frozenset[str]:
    """The relations a statement names in a language other than English, each by its English word.

    A relation said with the user ("meine Freundin und ich", "ma femme et moi") names the user's own household, not
    somebody else's news.

    >>> sorted(relations_named("Meine Schwester ist nach Berlin gezogen."))
    ['sister']
    """
    return frozenset(
        relation
        for relation, finder in _FINDERS.items()
        if any(not _WITH_THE_USER.match(text, m.end()) for m in finder.finditer(text))
    )


# "... and I" after a relation: the user and the relation together
_WITH_THE_USER = re.compile(
    r"\s+(?:und ich|en ik|och jag|og jeg|ja minä|et moi|y yo|i jo|e io|e eu|și eu|i ja|a já|és én|ve ben|и я|і я"
    r"|και εγώ|dan saya|và tôi)(?![\w-])",
    re.IGNORECASE,
)
