"""Cues of a change said in languages other than English, and of the look-alikes beside it: a small lexicon.

The English cues live in ``words`` (``announces_change``) and ``subject`` (acts, additions, plans, times
long past, occasions, the first person). The embedding model reads English only (the learned reading of
``reading`` is at chance on other languages), so a change said in another language ("Bin letzten Monat nach
Berlin gezogen", "Ahora trabajo en una escuela", "先月、大阪に引っ越しました") is found by its words here:

- ``change``: the newer statement says how things stand now or that they changed ("jetzt", "désormais", "ya no",
  "non più", "переехал", "引っ越し", "不再"), or calls a plan off ("abgesagt", "annullato") with no occasion named;
- ``adds``: it adds a value beside the older one ("auch", "également", "además", "un altro", "тоже", "另外");
- ``plan``: a plan, a wish or a maybe ("vielleicht", "j'aimerais", "me gustaría", "собираюсь", "つもり", "打算");
- ``long_ago``: a time long past ("als Kind", "il y a dix ans", "hace años", "в детстве", "小时候"), unless the
  statement also says how things stand now ("Früher ..., jetzt ...": a change);
- ``occasion``: one occasion ("gestern", "la semaine dernière", "una vez", "на прошлой неделе", "昨日");
- ``first_person``: the statement speaks of the user ("ich", "mon", "mi", "я", "私", "我").

The languages: German, Dutch, Swedish, Danish, Norwegian, Finnish, French, Spanish, Catalan, Italian, Portuguese,
Romanian, Polish, Czech, Slovak, Hungarian, Turkish, Russian, Ukrainian, Greek, Indonesian, Vietnamese, Japanese,
Chinese and Korean. Words that are common English words ("nun", "most", "will", "also", "is", "die") are left out,
so English text reads as it did. Pure: the standard library only.
"""

from __future__ import annotations

import functools
import re

__all__ = ["cues_of"]

# kind -> language -> word forms (one regular expression, matched case-insensitively between word boundaries)
_SPACED: dict[str, dict[str, str]] = {
    "change": {
        "de": r"jetzt|nur noch|inzwischen|mittlerweile|neuerdings|seit kurzem|nicht mehr|kein\w* \w+ mehr"
        r"|(?:statt|anstatt)(?:dessen)?|umgezogen|gezogen|ziehe (?:\w+ )?um|gewechselt|wechsle|umgestiegen"
        r"|steige (?:\w+ )?um"
        r"|aufgehört|höre (?:\w+ )?auf|gekündigt|ab sofort|neue[nmrs]?|verkauft|getauscht|ersetzt",
        "nl": r"nu|tegenwoordig|inmiddels|sinds kort|niet meer|geen \w+ meer|in plaats (?:daarvan|van)|verhuisd"
        r"|overgestapt|gestopt|gewisseld|vervangen|verkocht|nieuwe?",
        "sv": r"nu|numera|nuförtiden|nu för tiden|inte längre|inte \w+ längre|istället|i stället|flyttat|flyttade"
        r"|bytt|bytte|slutat|slutade|sålt|sålde|nytt|nya",
        "da_no": r"nå|nu om dage(?:n)?|nuomstunder|ikke længere|ikke lenger|i stedet|flyttet|flyttede|flyttet"
        r"|skiftet|skiftede|byttet|byttede|sluttet|sluttede|stoppet|solgt|(?-i:nyt)",
        "fi": r"(?-i:nyt|Nyt)|nykyään|nykyisin|enää|sen sijaan|muutin|muutimme|muuttanut|muuttaneet|vaihdoin|vaihdoimme"
        r"|vaihtanut|lopetin|lopettanut|myin|uusi|uuden|uudessa|uuteen",
        "fr": r"maintenant|désormais|dorénavant|à présent|ces temps-ci|ces jours-ci|n(?:e\s+|')\w+\s+(?:\w+\s+)?plus"
        r"|plus jamais|au lieu d[eu]|à la place|déménagé|emménagé|changé|passée? à|suis passée?|arrêté"
        r"|quitté|vendu|remplacé|installée?s? (?:à|a|en|au|dans)|nouve(?:au|lle|l)",
        "es": r"ahora|actualmente|hoy en día|últimamente|ya no|ya casi no|en (?:lugar|vez) de|me mudé|mudado"
        r"|nos mudamos"
        r"|mudamos|cambié|cambiado|cambiamos|dejé de|dejado de|me pasé a|vendí|nuev[oa]s?",
        "ca": r"ara|ja no|en lloc de|m'he mudat|ens hem mudat|he canviat|canviat|he deixat|deixat de|nou|nova",
        "it": r"ora|adesso|ormai|attualmente|ultimamente|non \w+ più|non più|invece|al posto d\w*"
        r"|trasferit[oaie]|traslocat[oaie]|passat[oaie] a|cambiat[oaie]|smess[oa]|lasciat[oaie]|venduto"
        r"|nuov[oaie]",
        "pt": r"agora|(?:vim|fui|viemos|fomos) (?:morar|viver|trabalhar)|atualmente|hoje em dia|já não|não \w+ mais"
        r"|em vez de|ao invés de|mudei|mudámos|mudamos"
        r"|mudei-me|me mudei|troquei|trocámos|deixei de|parei de|passei a|vendi|nov[oa]s?",
        "ro": r"acum(?! \w+ ani)|în prezent|nu mai|în loc de|m-am mutat|ne-am mutat|am schimbat|am trecut la|m-am lăsat"
        r"|am renunțat|am vândut|nou|nouă",
        "pl": r"teraz|obecnie|już nie|zamiast|przeprowadzi\w+|zmieni\w+|przesze?dł\w*|przeszł\w+|rzuci\w+"
        r"|przesta\w+|sprzeda\w+|now(?:y|a|e|ą|ego|ej|ych|ym|ymi)",
        "cs_sk": r"teď|nyní|teraz|už ne\w+|už nie\w*|místo toho|namiesto|přestěhoval\w*|presťahoval\w*|změnil\w*"
        r"|zmenil\w*|přešel|přešla|prešiel|prešla|přestal\w*|prestal\w*|prodal\w*|predal\w*|nov[ýáé]",
        "hu": r"mostanában|manapság|már nem|helyett|költöztem|költöztünk|elköltöz\w+|átköltöz\w+|váltottam"
        r"|áttértem|abbahagytam|felmondtam|eladtam|új",
        "tr": r"artık|şimdi|şu anda|bunun yerine|yerine|taşındım|taşındık|geçtim|değiştirdim|bıraktım|sattım"
        r"|yeni",
        "ru": r"теперь|сейчас|нынче|больше не|уже не|вместо|переехал\w*|перебрал\w*|перешёл|перешел|перешла"
        r"|перешли|сменил\w*|поменял\w*|бросил\w*|перестал\w*|уволил\w*|продал\w*|нов(?:ый|ая|ое|ые|ого|ую|ой)",
        "uk": r"тепер|зараз|більше не|вже не|замість|переїха\w+|перейшов|перейшла|змінив\w*|поміняв\w*|кинув"
        r"|кинула|продав\w*|нов(?:ий|а|е|і|ого|у)",
        "el": r"τώρα|πλέον|πια|αντί (?:για|να)|μετακόμισα|μετακομίσαμε|άλλαξα|αλλάξαμε|σταμάτησα|πούλησα"
        r"|καινούρι\w+|καινούργι\w+|νέ[οα]ς?",
        "id": r"sekarang|kini|tidak lagi|tak lagi|sudah tidak|bukan lagi|pindah|beralih|ganti|berhenti"
        r"|sebagai gantinya|menjual",
        "vi": r"bây giờ|hiện nay|hiện tại|không còn|thay vì|đã chuyển|chuyển sang|chuyển đến|đổi sang|đã bỏ"
        r"|nghỉ việc|mới",
        # a move said of somebody or something else ("A empresa mudou-se", "se mudó") and a place joined ("J'ai
        # rejoint une startup"): acts that end what held
        "de_acts": r"beigetreten|übernommen",
        "nl_acts": r"overgenomen",
        "fi_acts": r"muutti|muuttivat|vaihtoi|vaihtoivat",
        "fr_acts": r"rejoint|intégré",
        "es_acts": r"se mudó|se mudaron|se trasladó|se trasladaron|me trasladé|trasladad[oa]s?|me uní|cambió|cambiaron",
        "ca_acts": r"s'ha mudat|s'han mudat",
        "it_acts": r"entrat[oaie] (?:in|a|nel|nella|alla|al)",
        "pt_acts": r"mudou|mudou-se|mudaram|mudaram-se|se mudou|entrei (?:na|no|para)",
        "ro_acts": r"s-a mutat|s-au mutat",
        "hu_tr_acts": r"költözött|költöztek|taşındı|taşındılar",
        "el_acts": r"μετακόμισε|μετακόμισαν",
    },
    # a plan called off ("Ho annullato tutto", "abgesagt"): a change, unless of one occasion ("Exceptionnellement,
    # celle de demain est annulée": the habit holds)
    "cancel": {
        "de_nl": r"abgesagt|storniert|geannuleerd|afgezegd",
        "sv_da_no_fi": r"avbokat|avbokade|inställt|aflyst|avlyst|peruin|perunut|peruttu",
        "fr": r"annulée?s?",
        "es_pt_ca": r"cancelé|cancelei|cancelad[oa]s?|anulé|anulei|anulad[oa]s?|cancel·lat",
        "it_ro": r"annullat[oaie]|disdett[oaie]|am anulat|anulat[ăe]?",
        "pl_cs_sk": r"odwoła\w+|zrušil\w*|zrušen\w*",
        "hu_tr": r"lemondtam|iptal (?:ettim|etti|ettik|edildi)",
        "ru_uk": r"отменил\w*|отмен[её]н\w*|скасува\w+",
        "el": r"ακύρωσα|ακυρώθηκε",
        "id_vi": r"membatalkan|dibatalkan|đã hủy",
    },
    # since when a state holds ("seit Oktober", "desde marzo"): a change, unless since long ago ("depuis toujours")
    "since": {
        "de": r"seit",
        "nl": r"sinds",
        "fr": r"depuis",
        "es_pt": r"desde",
        "it": r"da quando|dallo scorso|dalla scorsa",
        "sv": r"sedan (?:i|förra)",
        "fi": r"lähtien|alkaen",
        "pl_cs": r"od (?:zeszł\w+|ubiegł\w+|minul\w+|jara|léta|podzimu|zimy|wiosny|lata|jesieni)",
        "hu_tr": r"óta|beri",
        "ru_uk": r"с прошл\w+|з минул\w+",
        "id_vi": r"sejak|từ khi|kể từ",
    },
    "adds": {
        "de": r"auch|ebenfalls|zusätzlich|außerdem|noch ein\w*|ein\w* weitere\w*|ein\w* zweite\w*",
        "nl": r"ook|eveneens|daarnaast|bovendien|nog een|een tweede",
        "sv": r"också|även|dessutom|en till|ett till|en andra|ett andra",
        "da_no": r"også|desuden|i tillegg|en til|endnu en|enda en|en anden|en annen",
        "fi": r"myös|lisäksi|toisen|toinen",
        "fr": r"aussi|également|en plus|de plus|en outre|un(?:e)? autre|un(?:e)? deuxième|un second|une seconde",
        "es": r"también|además|asimismo|otr[oa]|un segundo|una segunda",
        "ca": r"també|a més|un altre|una altra",
        "it": r"anche|inoltre|in più|un altro|un'altra|un secondo|una seconda",
        "pt": r"também|além disso|outr[oa]|mais um|mais uma|um segundo|uma segunda",
        "ro": r"de asemenea|încă un|încă o|în plus|un al doilea|o a doua",
        "pl": r"też|także|również|jeszcze jed\w+|dodatkowo|oprócz tego|drugi|drugą|drugie|drugiego",
        "cs_sk": r"také|taky|též|tiež|ještě jed\w+|ešte jed\w+|navíc|další|ďalš\w+|druh[ýáé]",
        "hu": r"szintén|még egy|egy másik|ezenkívül|emellett|egy második",
        "tr": r"ayrıca|bir de|başka bir|ikinci bir|hem de",
        "ru": r"тоже|также|ещё|еще|кроме того|помимо|втор(?:ой|ую|ое|ого)",
        "uk": r"теж|також|ще од\w+|крім того|друг(?:ий|у|е|ого)",
        "el": r"επίσης|ακόμα έν\w+|ακόμα μία|ακόμη έν\w+|επιπλέον|δεύτερ\w+",
        "id": r"juga|selain itu|satu lagi|tambahan|kedua",
        "vi": r"cũng|thêm|ngoài ra|nữa",
    },
    "plan": {
        "de": r"vielleicht|eventuell|möchte|würde gern\w*|hätte gern\w*|ich plane|wir planen|überlege|habe vor"
        r"|haben vor|irgendwann|hoffe|wenn \w+ \w+ würde",
        "nl": r"misschien|wil graag|zou graag|ben van plan|zijn van plan|overweeg|ooit|hoop ik|ik hoop",
        "sv": r"kanske|skulle vilja|planerar|funderar på|hoppas|någon gång",
        "da_no": r"måske|kanskje|vil gerne|vil gjerne|planlægger|planlegger|overvejer|vurderer|håber|håper"
        r"|en dag",
        "fi": r"ehkä|haluaisin|suunnittelen|harkitsen|toivon|joskus|aion",
        "fr": r"peut-être|j'aimerais|je voudrais|je compte|j'envisage|envisage de|projette|un jour|j'espère"
        r"|je pense (?:à|a)",
        "es": r"quizás?|tal vez|me gustaría|estoy pensando en|pienso|planeo|algún día|ojalá|espero|quiero",
        "ca": r"potser|m'agradaria|penso|un dia|espero|vull",
        "it": r"forse|vorrei|mi piacerebbe|penso di|sto pensando|ho intenzione|prima o poi|spero|un giorno",
        "pt": r"talvez|gostaria|queria|penso em|estou a pensar|estou pensando|planeio|pretendo|um dia|espero",
        "ro": r"poate|aș vrea|mi-ar plăcea|mă gândesc să|plănuiesc|sper|într-o zi",
        "pl": r"może|chciał\w*bym|planuję|zastanawiam się|myślę o|mam nadzieję|mam zamiar",
        "cs_sk": r"možná|možno|chtěl\w* bych|chcel\w* by|plánuj\w+|uvažuj\w+|doufám|dúfam",
        "hu": r"talán|szeretnék|tervezem|gondolkodom|remélem",
        "tr": r"belki|istiyorum|düşünüyorum|planlıyorum|umarım|bir gün",
        "ru": r"может быть|возможно|хотел\w* бы|хочу|планирую|думаю (?:о|об|над)|подумываю|когда-нибудь"
        r"|надеюсь|собираюсь",
        "uk": r"можливо|хотів би|хотіла б|хочу|планую|думаю про|надіюсь|сподіваюсь|збираюсь",
        "el": r"ίσως|θα ήθελα|σκέφτομαι να|σχεδιάζω|κάποια μέρα|ελπίζω",
        "id": r"mungkin|ingin|berencana|rencananya|suatu hari|berharap|mempertimbangkan",
        "vi": r"có lẽ|muốn|dự định|một ngày nào đó|hy vọng",
    },
    "long_ago": {
        "de": r"früher|damals|als kind|vor (?:\w+ )?jahren|in meiner jugend|seit jeher|seit meiner kindheit"
        r"|seit (?:\w+ )?jahren|seit langem",
        "nl": r"vroeger|al jaren|sinds jaren|als kind|jaren geleden|\w+ jaar geleden|toen ik \w+ was",
        "sv": r"förr|som barn|för \w+ år sedan|när jag var",
        "da_no": r"før i tiden|før i tida|som barn|for \w+ år siden|da jeg var",
        "fi": r"ennen|lapsena|kun olin|vuotta sitten|vuosia sitten",
        "fr": r"depuis (?:des|\w+) années|depuis longtemps|autrefois|quand j'étais|il y a (?:\w+ )?ans|dans le temps"
        r"|depuis toujours|enfant,|étant enfant",
        "es": r"desde hace (?:\w+ )?años|desde hace tiempo|de niñ[oa]|cuando era|hace (?:\w+ )?años|de pequeñ[oa]"
        r"|en mi juventud|desde siempre",
        "ca": r"de petit|de petita|quan era|fa (?:\w+ )?anys",
        "it": r"da anni|da molti anni|da bambin[oa]|quando ero|(?:\w+ )?anni fa|da sempre|da piccol[oa]",
        "pt": r"há anos que|desde há anos|antigamente|quando era|em criança|há (?:\w+ )?anos|desde sempre"
        r"|em pequen[oa]",
        "ro": r"pe vremuri|când eram|în copilărie|acum \w+ ani|dintotdeauna",
        "pl": r"od lat|kiedyś|gdy był\w*|jako dziecko|\w+ lat temu|w dzieciństwie|od zawsze",
        "cs_sk": r"kdysi|kedysi|když jsem byl\w*|jako dítě|ako dieťa|před \w+ lety|pred \w+ rokmi|odjakživa",
        "hu": r"évek óta|régen|gyerekkoromban|évvel ezelőtt|évekkel ezelőtt|mindig is",
        "tr": r"yıllardır|eskiden|çocukken|yıl önce|yıllar önce|gençken",
        "ru": r"уже много лет|много лет|давно|раньше|в детстве|когда я был\w*|лет назад|много лет|давным-давно",
        "uk": r"раніше|в дитинстві|у дитинстві|коли я був\w*|років тому",
        "el": r"παλιά|όταν ήμουν|ως παιδί|πριν από χρόνια|χρόνια πριν",
        "id": r"dulu|dahulu|waktu kecil|bertahun-tahun yang lalu",
        "vi": r"ngày xưa|hồi nhỏ|trước đây|năm trước",
    },
    "occasion": {
        "de": r"gestern|vorgestern|waren|ausnahmsweise|(?:zu|an) (?:ostern|weihnachten|silvester)"
        r"|letzte[nsm]? (?:woche|wochenende|nacht|jahr|monat|sommer|winter|mal)"
        r"|einmal|im urlaub|heute morgen|heute abend|nächste[nsm]? (?:woche|wochenende|monat|jahr)",
        "nl": r"bij uitzondering|uitzonderlijk|met (?:kerst|pasen)|gisteren|vorige (?:week|maand)|vorig jaar"
        r"|afgelopen weekend|een keer|op vakantie|vanochtend"
        r"|vanavond|volgende (?:week|maand)",
        "sv": r"undantagsvis|i (?:jul|påsk)|igår|i går|förra (?:veckan|året|månaden)|i helgen|en gång|på semester"
        r"|i morse|i kväll"
        r"|nästa vecka",
        "da_no": r"i går|sidste (?:uge|år|måned)|forrige (?:uke|måned)|i fjor|en gang|på ferie|i morges"
        r"|i aften|i kveld|næste uge|neste uke",
        "fi": r"eilen|viime (?:viikolla|vuonna|kuussa|viikonloppuna)|kerran|lomalla|tänä aamuna|tänä iltana"
        r"|ensi viikolla",
        "fr": r"exceptionnellement|pour une fois|à (?:noël|pâques)|hier soir|hier matin|avant-hier"
        r"|la semaine dernière|l'année dernière|l'an dernier|le mois dernier"
        r"|le week-end dernier|une fois|en vacances|ce matin|ce soir|la semaine prochaine",
        "es": r"excepcionalmente|por una vez|en (?:navidad|semana santa)|ayer|anoche|la semana pasada|el año pasado"
        r"|el mes pasado|el fin de semana|una vez|de vacaciones"
        r"|esta mañana|esta noche|la próxima semana|la semana que viene",
        "ca": r"ahir|la setmana passada|l'any passat|una vegada|de vacances|aquest matí",
        "it": r"eccezionalmente|per una volta|a (?:natale|pasqua)|ieri|la settimana scorsa|l'anno scorso"
        r"|il mese scorso|lo scorso|una volta|in vacanza|stamattina"
        r"|stasera|la prossima settimana",
        "pt": r"excepcionalmente|por uma vez|no natal|na páscoa|ontem|semana passada|ano passado|mês passado"
        r"|no fim de semana|uma vez|de férias|esta manhã"
        r"|hoje de manhã|esta noite|próxima semana",
        "ro": r"ieri|săptămâna trecută|anul trecut|luna trecută|o dată|în concediu|în vacanță|azi-dimineață"
        r"|diseară|săptămâna viitoare",
        "pl": r"wyjątkowo|na (?:święta|wielkanoc)|wczoraj|w zeszłym (?:tygodniu|roku|miesiącu)|w weekend|na wakacjach"
        r"|na urlopie|dziś rano"
        r"|dziś wieczorem|w przyszłym tygodniu",
        "cs_sk": r"výjimečně|výnimočne|na vánoce|o velikonocích|včera|minulý týden|minulý týždeň|loni|minulý měsíc"
        r"|minulý mesiac|jednou|raz|na dovolené"
        r"|na dovolenke|dnes ráno|dnes večer|příští týden|budúci týždeň",
        "hu": r"tegnap|múlt héten|tavaly|egyszer|nyaraláson|szabadságon|ma reggel|ma este|jövő héten",
        "tr": r"dün|geçen (?:hafta|yıl|sene)|bir kez|bir kere|tatilde|bu sabah|bu akşam|gelecek hafta|haftaya",
        "ru": r"в виде исключения|на (?:рождество|пасху)|вчера|на прошлой неделе|в прошлом году|на выходных|однажды"
        r"|один раз|в отпуске|сегодня утром"
        r"|сегодня вечером|на следующей неделе",
        "uk": r"вчора|учора|минулого тижня|минулого року|торік|одного разу|у відпустці|сьогодні вранці"
        r"|наступного тижня",
        "el": r"χθες|χτες|την περασμένη εβδομάδα|πέρσι|μια φορά|σε διακοπές|σήμερα το πρωί|απόψε"
        r"|την επόμενη εβδομάδα",
        "id": r"kemarin|minggu lalu|tahun lalu|akhir pekan|saat liburan|waktu liburan|tadi pagi"
        r"|nanti malam|minggu depan",
        "vi": r"hôm qua|tuần trước|năm ngoái|một lần|đi nghỉ|sáng nay|tối nay|tuần sau",
    },
    "first_person": {
        "de": r"ich|mich|mir|mein\w*|wir|uns|unser\w*",
        "nl": r"ik|mij|mijn|wij|ons|onze",
        "sv": r"jag|mig|mej|mitt|mina|oss|vår|vårt|våra",
        "da_no": r"jeg|meg|mig|vores",
        "fi": r"minä|mä|minun|mun|minulla|minua|meidän|meillä",
        "fr": r"je|j'|moi|mon|ma|mes|nous|notre|nos",
        "es": r"yo|mi|mis|nosotros|nosotras|nuestr[oa]s?",
        "ca": r"meu|meva|meus|meves|nosaltres",
        "it": r"mio|(?:la|una) mia|miei|mie|noi|nostr[oaie]",
        "pt": r"meu|minha|meus|minhas|nós|noss[oa]s?",
        "ro": r"mea|mei|mele|noi|nostru|noastră",
        "pl": r"ja|mój|moja|moje|moi|mnie|nasz\w*",
        "cs_sk": r"já|ja|můj|môj|moje|moja|moji|mě|mne|náš|naše|náš",
        "hu": r"én|enyém|nekem|engem|nálam",
        "tr": r"benim|bana|biz|bizim",
        "ru": r"я|мой|моя|моё|мое|мои|мне|меня|мы|наш\w*",
        "uk": r"я|мій|моя|моє|мої|мені|мене|ми|наш\w*",
        "el": r"εγώ|μου|μας|εμείς",
        "id": r"saya|aku|kami|kita",
        "vi": r"tôi|chúng tôi|mình",
    },
}
# in scripts written without spaces between words: matched as they stand
_UNSPACED: dict[str, tuple[str, ...]] = {
    "change": (
        "自从",
        # Japanese
        "今は",
        "現在は",
        "最近は",
        "もう",
        "代わりに",
        "引っ越し",
        "引越し",
        "転職",
        "乗り換え",
        "変え",
        "変わり",
        "辞め",
        "やめ",
        "移り",
        "移っ",
        "新しい",
        # Chinese
        "现在",
        "如今",
        "目前",
        "不再",
        "已经不",
        "改为",
        "改成",
        "换成",
        "换了",
        "搬到",
        "搬去",
        "搬家",
        "辞职",
        "戒了",
        "新的",
        "转到",
        "改用",
        # Korean
        "이제",
        "요즘",
        "지금은",
        "더 이상",
        "대신",
        "이사",
        "바꿨",
        "그만두",
        "그만뒀",
        "새로운",
        "옮겼",
    ),
    "cancel": (
        "キャンセル",
        "取り消",
        "取消",
        "취소",
    ),
    "adds": (
        "また",
        "さらに",
        "もう一",
        "二つ目",
        "追加",
        "也",
        "还有",
        "另一",
        "另外",
        "第二",
        "또",
        "또한",
        "하나 더",
        "추가로",
    ),
    "plan": (
        "かもしれない",
        "たいと",
        "たいです",
        "たい。",
        "したい",
        "つもり",
        "予定",
        "検討",
        "いつか",
        "可能",
        "也许",
        "想要",
        "打算",
        "计划",
        "考虑",
        "有一天",
        "希望",
        "아마",
        "싶",
        "계획",
        "언젠가",
        "고려",
    ),
    "long_ago": (
        "多年",
        "何年も",
        "昔",
        "子供の頃",
        "若い頃",
        "年前",
        "以前",
        "小时候",
        "当年",
        "从前",
        "예전에",
        "어렸을 때",
        "년 전",
    ),
    "occasion": (
        "昨日",
        "先週",
        "去年",
        "週末",
        "一度",
        "休暇",
        "今朝",
        "今夜",
        "来週",
        "昨天",
        "上周",
        "上个星期",
        "上个月",
        "周末",
        "一次",
        "度假",
        "今天早上",
        "今晚",
        "下周",
        "어제",
        "지난주",
        "작년",
        "지난달",
        "주말",
        "한 번",
        "휴가",
        "오늘 아침",
        "오늘 밤",
        "다음 주",
    ),
    "first_person": ("私", "僕", "俺", "わたし", "我", "나는", "내가", "저는", "제가", "우리"),
}

_WORD_STARTS = re.compile(r"(?<![\w'-])\w")


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regular expression ("a|b(?:c|d)" -> ["a", "b(?:c|d)"])."""
    out, depth, last, escaped = [], 0, 0, False
    for i, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(pattern[last:i])
            last = i + 1
    return [*out, pattern[last:]]


def _by_first_letter(languages: dict[str, str]) -> dict[str, str]:
    """The forms of one kind of cue, one pattern per letter a form may open with ("" for forms that may open with
    any), so each word of a statement is tried against the few forms that may match it."""
    buckets: dict[str, list[str]] = {}
    for forms in languages.values():
        for form in _alternatives(forms):
            first = form[0].lower() if form[0].isalpha() else ""
            buckets.setdefault(first, []).append(form)
    wild = buckets.pop("", [])
    return {first: "|".join(forms + wild) for first, forms in [*buckets.items(), ("", [])]}


_BUCKETS = {kind: _by_first_letter(languages) for kind, languages in _SPACED.items()}


@functools.cache
def _pattern(kind: str, first: str) -> re.Pattern[str]:
    """The compiled forms of one bucket, compiled when first needed (compiling them all would slow the import)."""
    buckets = _BUCKETS[kind]
    return re.compile(r"(?:" + buckets.get(first, buckets[""]) + r")(?![\w-])", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)  # each rule of subject asks for the cues of the same statement
def cues_of(text: str) -> frozenset[str]:
    """The kinds of cue a statement holds in a language other than English (``change``, ``adds``, ``plan``,
    ``long_ago``, ``occasion``, ``first_person``); a time long past said beside how things stand now is a change.

    >>> sorted(cues_of("Bin letzten Monat nach Berlin gezogen."))
    ['change']
    """
    body = text.replace("\u2019", "'")
    starts = [m.start() for m in _WORD_STARTS.finditer(body)]  # each form is tried where a word starts only
    unspaced = not body.isascii()  # the words of scripts without spaces are never ASCII
    found = set()
    for kind, buckets in _BUCKETS.items():
        said = any(
            _pattern(kind, first if first in buckets else "").match(body, start)
            for start in starts
            for first in (body[start].lower(),)
        )
        if said or (unspaced and any(word in body for word in _UNSPACED.get(kind, ()))):
            found.add(kind)
    if "since" in found and "long_ago" not in found:
        found.add("change")
    if "cancel" in found and "occasion" not in found:
        found.add("change")
    found -= {"since", "cancel"}
    if "long_ago" in found and "change" in found:
        found.discard("long_ago")
    return frozenset(found)
