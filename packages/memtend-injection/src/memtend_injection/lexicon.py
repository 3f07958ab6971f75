"""A multilingual lexicon of the words injections use to address an AI agent, written for memtend, so that the
classifier's word cues (``features``) fire in languages its sentence encoder does not know.

The encoder (Universal Sentence Encoder multilingual) knows 16 languages; a user meets any. The lists below cover
the languages most used on the web (roughly the first forty of W3Techs' content-language ranking) and the most
spoken ones beside them: Arabic, Bengali, Bulgarian, Catalan, Chinese, Croatian, Czech, Danish, Dutch, Estonian,
Finnish, French, German, Greek, Hebrew, Hindi, Hungarian, Indonesian, Italian, Japanese, Korean, Latvian,
Lithuanian, Malay, Norwegian, Persian, Polish, Portuguese, Romanian, Russian, Serbian (both scripts), Slovak,
Slovenian, Spanish, Swahili, Swedish, Tagalog, Thai, Turkish, Ukrainian, Urdu and Vietnamese. Each entry is the
start of a word (stems match every ending) or, in scripts written without spaces or with joined letters, a
phrase matched anywhere. A match is one 0/1 cue among the piece's features: evidence the classifier weighs,
never a verdict on its own.
"""

from __future__ import annotations

import re

__all__ = ["LEXICON", "lexicon_patterns"]

# Stems in alphabetic scripts with spaces (Latin, Cyrillic, Greek): matched at the start of a word.
# Phrases in other scripts (Arabic, Hebrew, Devanagari, Bengali, Thai, Chinese, Japanese, Korean): matched anywhere.
LEXICON: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # an AI, an assistant, an agent, a chatbot, a language model
    "ai_ref": (
        ("изкуствен интелект", "асистент", "агент", "чатбот", "бот ", "езиков модел", "intel·ligència artificial",
         "assistent", "xatbot", "model de llenguatge", "umělá inteligence", "umělou inteligenc",
         "umelá inteligenc", "jazykový model", "sprogmodel", "språkmodell", "språkmodel", "ki-",
         "τεχνητή νοημοσύνη", "τεχνητής νοημοσύνης", "βοηθ", "πράκτορ", "γλωσσικό μοντέλο", "tehisintellekt",
         "vestlusrobot", "keelemudel", "tekoäly", "avustaja", "agentti", "kielimalli", "umjetn", "umetn",
         "veštačk", "вештачк", "асистент", "четбот", "četbot", "mesterséges", "asszisztens", "ügynök",
         "nyelvi modell", "asisten", "pembantu ai", "ejen", "agen ", "kecerdasan buatan", "dirbtin", "asistent",
         "pokalbių robot", "mākslīg", "aģent", "tērzēšanas robot", "inteligență artificială",
         "inteligenta artificiala", "model de limbaj", "akili bandia", "msaidizi", "wakala", "штучн", "ші ",
         "помічник", "чат-бот", "мовн", "trợ lý", "tác tử", "trí tuệ nhân tạo", "mô hình ngôn ngữ", "yapay zek",
         "asistan", "sohbet botu", "dil modeli", "ии ", "ассистент", "помощник", "нейросет", "языков",
         "искусственн", "ai-", "katulong", "chatbot"),
        ("এআই", "সহকারী", "চ্যাটবট", "এজেন্ট", "هوش مصنوعی", "دستیار", "چت\u200cبات", "چت بات", "בינה מלאכותית",
         "עוזר", "סוכן", "צ'אטבוט", "एआई", "सहायक", "एजेंट", "चैटबॉट", "اے آئی", "اسسٹنٹ", "معاون", "ایجنٹ",
         "چیٹ بوٹ", "الذكاء الاصطناعي", "مساعد", "وكيل", "روبوت", "ผู้ช่วย", "เอไอ", "แชทบอท", "アシスタント",
         "エージェント", "チャットボット", "人工知能", "助手", "助理", "智能体", "人工智能", "聊天机器人",
         "어시스턴트", "에이전트", "인공지능", "챗봇"),
    ),
    # the user, the owner of the account
    "user_ref": (
        ("потребител", "usuari", "uživatel", "používateľ", "bruger", "bruker", "χρήστ", "kasutaja", "käyttäjä",
         "korisnik", "корисник", "uporabnik", "felhasználó", "pengguna", "naudotoj", "lietotāj", "utilizator",
         "mtumiaji", "користувач", "người dùng", "kullanıcı", "пользовател", "владел", "власник", "kontoens ejer",
         "account owner", "pemilik"),
        ("ব্যবহারকারী", "کاربر", "משתמש", "उपयोगकर्ता", "यूज़र", "صارف", "المستخدم", "ผู้ใช้", "ユーザー", "利用者",
         "用户", "用戶", "사용자"),
    ),
    # instructions, orders, a prompt
    "instruction_ref": (
        ("instruction", "instruksi", "instruks", "instrukc", "instrucc", "instruccions", "instrucțiun",
         "instructiun", "инструкци", "інструкці", "указани", "вказівк", "pokyn", "οδηγί", "οδηγίες", "juhis",
         "ohje", "uput", "упутств", "navodil", "utasítás", "arahan", "nurodym", "norādījum", "maagizo", "utos",
         "hướng dẫn", "chỉ dẫn", "mệnh lệnh", "talimat", "prompt", "промпт", "system prompt", "systémov",
         "sistemsk", "rendszerprompt", "lời nhắc hệ thống", "sistem istem", "системн"),
        ("নির্দেশ", "دستورالعمل", "دستور", "הוראות", "הנחיות", "निर्देश", "ہدایات", "تعليمات", "คำสั่ง", "指示",
         "プロンプト", "指令", "提示词", "지시", "프롬프트"),
    ),
    # ignore, forget, what came before no longer applies
    "override": (
        ("забрави", "игнорир", "предишн", "oblida", "ignora", "anteriors", "zapomeň", "zapomen", "předchozí",
         "ignoruj", "zabudni", "predchádzajúc", "glem ", "tidligere", "glöm", "αγνόησε", "ξέχασε", "ξέχνα",
         "προηγούμεν", "unusta", "eelneva", "varasem", "unohda", "aiemm", "zaboravi", "prethodn", "занемари",
         "заборави", "pozabi", "prejšnj", "figyelmen kívül", "felejtsd", "korábbi", "abaikan", "lupakan",
         "sebelumnya", "sebelum ini", "pamiršk", "ankstesn", "ignorē", "aizmirsti", "iepriekšēj", "ignoră",
         "uită", "anterioare", "puuza", "sahau", "ya awali", "huwag pansinin", "kalimutan", "nauna", "забудь",
         "ігноруй", "попередн", "bỏ qua", "quên", "trước đó", "unut", "önceki", "yok say", "игнорируй",
         "предыдущ", "no longer valid", "ne važi", "nu mai sunt", "nebegalioj", "ne veljajo", "neplatí",
         "не важат", "не діють", "ei kehti", "gælder ikke", "gjelder ikke", "gäller inte", "tidak lagi",
         "không còn"),
        ("উপেক্ষা", "আগের", "نادیده", "قبلی", "התעלם", "שכח", "הקודמות", "अनदेखा", "पिछले", "نظرانداز", "پچھلی",
         "تجاهل", "السابقة", "เพิกเฉย", "ก่อนหน้า", "無視", "以前の", "これまでの", "忽略", "之前", "先前", "무시",
         "이전", "지금까지"),
    ),
    # telling nobody, asking nobody
    "secrecy": (
        ("не казвай", "без да питаш", "тайно", "sense preguntar", "no ho diguis", "neříkej", "nezmiňuj",
         "bez ptaní", "nehovor", "bez pýtania", "nespomínaj", "uden at spørge", "uten å spørre", "ikke nævn",
         "ikke nevn", "nämn inte", "μην πεις", "μην αναφέρ", "χωρίς να ρωτ", "ära ütle", "küsimata", "kysymättä",
         "älä kerro", "älä mainitse", "ne govori", "bez pitanja", "ne pominji", "ne spominji", "ne sprašuj",
         "ne povej", "ne kérdezd", "ne említsd", "kérdés nélkül", "tanpa bertanya", "jangan beri tahu",
         "jangan ceritakan", "jangan tanya", "jangan sebut", "neklausk", "nesakyk", "nestāsti", "bez jautāšanas",
         "nu-i spune", "nu spune", "fără să întreb", "usimuulize", "bila kuuliza", "usimwambie", "huwag sabihin",
         "huwag tanungin", "huwag itong sabihin", "не кажи", "не повідомляй", "без запит", "đừng nói",
         "đừng nhắc", "không cần hỏi", "bahsetme", "sormadan", "söyleme", "не говори", "не сообщай", "без вопрос",
         "не упоминай", "не говорите"),
        ("বলবে না", "না জানিয়ে", "نگو", "بدون پرسیدن", "אל תספר", "אל תזכיר", "בלי לשאול", "मत बताना", "मत बताओ",
         "बिना पूछे", "مت بتاؤ", "بغیر پوچھے", "لا تخبر", "دون أن تسأل", "ไม่ต้องบอก", "ไม่ต้องถาม", "言わないで",
         "伝えないで", "確認なし", "不要告诉", "无需确认", "不要提", "말하지 마", "묻지 않고", "언급하지 마"),
    ),
    # remember this for good
    "memory": (
        ("запомни", "завинаги", "recorda", "per sempre", "zapamatuj", "natrvalo", "zapamätaj", "husk ",
         "for altid", "for alltid", "för alltid", "θυμήσου", "για πάντα", "jäta meelde", "alatiseks",
         "muista tämä", "pysyvästi", "zapamti", "zauvijek", "zauvek", "запамти", "заувек", "zapomni",
         "jegyezd meg", "örökre", "emlékezz", "ingat", "selamanya", "simpan di memori", "atsimink", "įsimink",
         "visam laikui", "atceries", "uz visiem laikiem", "ține minte", "amintește-ți", "pentru totdeauna",
         "kumbuka", "milele", "tandaan", "habambuhay", "запам'ятай", "запамʼятай", "назавжди", "hãy nhớ",
         "ghi nhớ", "mãi mãi", "vĩnh viễn", "hatırla", "kalıcı", "aklında tut", "навсегда"),
        ("মনে রাখো", "চিরকাল", "به خاطر بسپار", "برای همیشه", "یادت باشد", "זכור", "לתמיד", "याद रखो",
         "हमेशा के लिए", "یاد رکھو", "ہمیشہ", "تذكر", "دائما", "จำไว้", "ตลอดไป", "覚えて", "記憶", "记住", "永久",
         "记忆", "기억", "앞으로 계속"),
    ),
    # whoever reads, handles or sums up this text
    "reader_ref": (
        ("който чете", "чете тази", "que llegeix", "que gestiona", "čte ", "čtou", "spravuje", "číta ",
         "der læser", "som leser", "som läser", "sköter", "διαβάζει", "διαχειρίζεται", "lugevale", "loeb ",
         "haldab", "lukee", "lukeva", "hoitava", "tiivistävä", "čita ", "чита ", "upravlja", "bere ", "olvasó",
         "olvassa", "kezeli", "membaca", "mengelola", "mengurus", "skaitan", "tvarkan", "kas lasa", "citește",
         "citiți", "gestionează", "anayesoma", "anayeshughulikia", "nagbabasa", "humahawak", "читає", "обробляє",
         "đang đọc", "đọc trang", "tóm tắt trang", "okuyan", "читает", "читающ"),
        ("পড়া", "পড়ছে", "می\u200cخواند", "می خواند", "שקורא", "שמנהל", "पढ़ने वाले", "संभालने वाले", "پڑھنے والے",
         "يقرأ", "ที่อ่าน", "読んでいる", "管理している", "阅读", "正在读", "읽는", "관리하는"),
    ),
    # summing up, the answer
    "answer_ref": (
        ("резюме", "обобщ", "shrnutí", "shrň", "zhrnutie", "zhrni", "opsummering", "oppsummering", "περίληψη",
         "σύνοψη", "kokkuvõte", "yhteenveto", "tiivist", "sažet", "sažima", "rezime", "povzet", "összefoglal",
         "ringkas", "rangkum", "santrauk", "kopsavilkum", "rezumat", "muhtasari", "buod", "підсумок", "tóm tắt",
         "özet", "пересказ", "сводк"),
        ("সারাংশ", "سارانش", "خلاصه", "סיכום", "सारांश", "خلاصہ", "ملخص", "สรุป", "要約", "摘要", "总结", "요약"),
    ),
    # a part to play
    "roleplay": (
        ("от сега нататък си", "роля", "играем", "personatge", "juguem", "od teď jsi", "hrajme", "odteraz si",
         "lad os lege", "la oss leke", "rollen", "fra nu af er du", "fra nå av er du", "från och med nu är du",
         "ρόλο", "παίζουμε", "από τώρα είσαι", "mängime", "rollis", "nüüdsest oled", "leikitään", "roolissa",
         "tästä lähtien olet", "igrajmo", "igrajva", "ulozi", "vlogi", "od sada si", "od zdaj si", "játsszunk",
         "szerepben", "mostantól te vagy", "main peran", "mulai sekarang kamu", "mulai sekarang anda",
         "pažaiskime", "vaidmen", "nuo šiol tu", "spēlēsim", "lomā", "turpmāk tu esi", "să ne jucăm", "rolul",
         "de acum ești", "tucheze", "kuanzia sasa wewe", "maglaro tayo", "karakter", "mula ngayon ikaw", "роль",
         "ролі", "відтепер ти", "nhập vai", "giữ vai", "từ giờ bạn là", "artık sen", "теперь ты", "ролев"),
        ("চরিত্রে", "نقش", "بازی کنیم", "از حالا تو", "בוא נשחק", "בדמות", "מעכשיו אתה", "किरदार", "भूमिका",
         "अब से तुम", "کردار", "บทบาท", "ロールプレイ", "役になりきって", "今から", "扮演", "角色", "从现在起",
         "역할", "지금부터 너는"),
    ),
    # an action taken for someone: a basket, a payment, a deletion, forwarding
    "action": (
        ("количка", "плати", "изтрий", "препрати", "cistella", "esborra", "reenvia", "zaplať", "smaž", "přepošli",
         "zaplaťte", "vymaž", "videresend", "vidarebefordra", "handlekurv", "slett", "καλάθι", "πλήρωσ",
         "διάγραψ", "προώθησ", "ostukorv", "kustuta", "broneeri", "ostoskori", "poista", "välitä", "košaric",
         "korpu", "корпу", "obriši", "izbriši", "proslijedi", "prosledi", "plačaj", "kosár", "fizess", "töröld",
         "továbbítsd", "keranjang", "troli", "bayar", "hapus", "padam", "pesankan", "krepšel", "sumokėk",
         "ištrink", "persiųsk", "groz", "samaksā", "izdzēs", "pārsūti", "coș", "plătiți", "plătește", "șterge",
         "redirecționează", "lipa ", "futa", "nunua", "burahin", "ipadala", "кошик", "оплат", "видали", "перешли",
         "giỏ hàng", "thanh toán", "xóa", "chuyển tiếp", "ödeme", "öde ", "корзин", "удали"),
        ("কার্ট", "মুছে", "কিনে", "سبد خرید", "پرداخت", "حذف", "עגלה", "שלמו", "מחק", "העבר", "कार्ट", "भुगतान",
         "हटा", "भेज दो", "کارٹ", "ادائیگی", "سلة", "ادفع", "احذف", "ตะกร้า", "ชำระ", "ลบ", "カート", "支払",
         "削除", "転送", "购物车", "支付", "删除", "转发", "장바구니", "결제", "삭제", "전달"),
    ),
}  # fmt: skip


def lexicon_patterns() -> dict[str, re.Pattern[str]]:
    """One case-insensitive pattern per cue name: the stems at the start of a word, the phrases anywhere."""
    out: dict[str, re.Pattern[str]] = {}
    for name, (stems, phrases) in LEXICON.items():
        parts = [r"(?<!\w)(?:" + "|".join(map(re.escape, stems)) + ")"] if stems else []
        if phrases:
            parts.append("(?:" + "|".join(map(re.escape, phrases)) + ")")
        out[name] = re.compile("|".join(parts), re.IGNORECASE)
    return out
