"""Passwords the gate finds beyond ``password: x`` (issue 14): German, French and Spanish phrasings, URLs with a
password in the user part, HTTP Basic headers, command-line flags, and "user / password" pairs; and ordinary text
using the same words, which must pass.

Each positive case names the exact value; the gate must refuse the text without echoing the value and ``redact``
must replace exactly that value, keeping the words around it.
"""

from __future__ import annotations

import pytest
from memtend.errors import SensitiveDataError
from memtend.policies.gate import check_write, find_sensitive, redact
from memtend.records import Source


def assert_refused_and_masked(before: str, value: str, after: str, kind: str) -> None:
    text = before + value + after
    with pytest.raises(SensitiveDataError) as err:
        check_write(text, Source.USER)
    assert kind in err.value.kinds
    message = str(err.value) + repr(err.value) + repr(err.value.args)
    assert value not in message
    masked = check_write(text, Source.USER, redact=True)
    assert masked.text == f"{before}[REDACTED:{kind}]{after}"
    assert redact(text) == masked.text
    assert find_sensitive(masked.text) == []


@pytest.mark.parametrize(
    ("before", "value", "after"),
    [
        # German
        ("Mein Passwort ist ", "Schnee!Flocke9", ""),
        ("Das Passwort für den Router lautet ", "Igel_2023", "."),
        ("Unser WLAN-Passwort ist ", "Kuckuck#2020", ""),
        ("Kennwort: ", "Rheinufer2023#", ""),
        ("Passwort lautet: ", "Eichhorn_88", ""),
        ("Das neue Kennwort lautet „", "Berg See 42!", "“"),
        # French
        ("Mon mot de passe est ", "Papillon#56", ""),
        ("Le mot de passe du wifi est ", "Croissant_2024", " !"),
        ("mot de passe : ", "Lavande!93", ""),
        ("Mon mdp c'est ", "Soleil-du-Sud7", ""),
        ("Le mot de passe est « ", "Soleil!44", " »"),
        # Spanish
        ("Mi contraseña es ", "Girasol$81", ""),
        ("La contraseña del banco es ", "Naranja#55", "."),
        ("contraseña: ", "Playa!Azul44", ""),
        ("La clave del router es ", "Mariposa#12", ""),
        ("Die Passwörter: ", "Apfel!12", ""),
        ("Zugangsdaten für das Portal: lena / ", "Biber#77", ""),
        ("identifiants : paul / ", "Fraise!31", ""),
        ("credenciales: luis / ", "Pino#88", ""),
    ],
)
def test_passwords_in_german_french_spanish(before: str, value: str, after: str) -> None:
    assert_refused_and_masked(before, value, after, "password")


@pytest.mark.parametrize(
    ("before", "value", "after"),
    [
        ("my pаsswоrd is ", "Gl4cier!Bay", ""),  # Cyrillic "а" and "о" inside a Latin word
        ("Ρassword: ", "x9y8z7w6", ""),  # Greek capital rho
        ("Мой пароль: ", "Зима2024!", ""),
        ("пароль от почты — ", "Лето#2023", ""),
        ("Minha senha é ", "Caju!2024", ""),
        ("A senha do wifi é ", "Coco#77", ""),
        ("Mijn wachtwoord is ", "Tulp!88", ""),
        ("hasło: ", "Wisla#12", ""),
        ("Lösenordet är ", "Älg!2020", ""),
        ("密码：", "abc12345", ""),
        ("パスワード: ", "Sakura!77", ""),
        ("Şifre: ", "Lale!55", ""),
    ],
)
def test_passwords_in_other_languages_and_look_alike_letters(before: str, value: str, after: str) -> None:
    assert_refused_and_masked(before, value, after, "password")


@pytest.mark.parametrize(
    ("before", "value", "after", "kind"),
    [
        ("Authorization: Basic ", "YWxpY2U6czNjcjN0LXBhc3M=", "", "password"),
        ("curl -H 'Authorization: basic ", "Ym9iOmh1bnRlcjJodW50ZXIy", "' https://api.example.com", "password"),
        ("REDIS_URL=redis://:", "Vq8pLz2Rk", "@cache.internal:6379/0", "connection_string"),
        ("ftp://deploy:", "Ft9!upload", "@files.example.org/in", "connection_string"),
        ("psql postgresql://report:", "Rep0rt!ng", "@db:5432/bi", "connection_string"),
        ("mongodb://admin:", "p@ss!w0rd", "@host/db", "connection_string"),
        ("mysql -u root -p", "W1ldCherry9", " shop", "password"),
        ("mariadb -uroot -p", "toor", "", "password"),
        ("mysql -u app -p ", "Sl0th!Bear", " -h db", "password"),
        ("mysql -h db -P 3306 -u app -p'", "Wh1te Rabbit", "' shop", "password"),
        ("sshpass -p '", "Qu1etRiver", "' ssh ops@bastion", "password"),
        ("redis-cli -h cache -a ", "Sn0wLeopard7", " ping", "password"),
        ("docker login -u bot -p ", "Dk3r!Tok3n", " registry.example.com", "password"),
        ("curl -u admin:", "Adm1nPw!", " https://api.example.com", "password"),
        ("PGPASSWORD=", "Xq7!pw9z", " psql -h db", "password"),
        ("MYSQL_PWD=", "Sup3rSecret", " mysql", "password"),
        ("credentials: alice / ", "Marzipan#31", "", "password"),
        ("Credentials are carol / ", "Tangerine88!", "", "password"),
        ("creds: bob/", "Quokka!77", "", "password"),
        ("log in as admin / ", "Heron#2020", "", "password"),
        ("The admin login is admin:", "Falcon#2024", ".", "password"),
        ("smbclient //nas/share -U bob%", "Nas!pw42", "", "password"),
        ("htpasswd -bc .htpasswd admin ", "Adm!n2024", "", "password"),
        ("ssh-keygen -t ed25519 -N '", "K3y!phrase", "' -f id", "password"),
        ("Server=db;Database=app;User Id=sa;Password=", "Sq1!Server", ";", "password"),
    ],
)
def test_credentials_without_the_word_password(before: str, value: str, after: str, kind: str) -> None:
    assert_refused_and_masked(before, value, after, kind)


@pytest.mark.parametrize(
    "text",
    [
        "Ich habe mein Passwort vergessen.",
        "Das Passwort ist Pflicht.",
        "Das Kennwort ist abgelaufen.",
        "Das Passwort für den Server ist im Tresor.",
        "Das WLAN-Passwort steht auf dem Router.",
        "J'ai oublié mon mot de passe hier.",
        "Le mot de passe est trop court.",
        "Le mot de passe du compte est expiré.",
        "Quel est le mot de passe du wifi ?",
        "No recuerdo mi contraseña.",
        "Mi contraseña es segura.",
        "¿Cuál es la contraseña del wifi?",
        "La clave es la paciencia.",
        "La clave del éxito es trabajar.",
        "The MDP is solved by value iteration.",
        "Authorization: Basic auth is disabled on this API.",
        "Authorization: Basic ${CREDS}",
        "Basic income is discussed.",
        "redis://localhost:6379/0",
        "postgres://user@host/db and https://[::1]:443/",
        "git clone ssh://git@github.com/acme/repo.git",
        "postgres://user:password@localhost/db",
        "mysql -u root -p",
        "mysql -u root -p shop",
        "mysql -p -h db shop",
        "mysqldump -u root -p --all-databases > all.sql",
        "mysql -u root -p < dump.sql",
        "mysql -p$DB_PASS -u app",
        "sshpass -p $SSHPASS ssh host",
        "curl -u $USER:$TOKEN https://api",
        "ssh -p 2222 deploy@host",
        "redis-cli -p 6380 ping",
        "docker run -p 8080:80 nginx",
        "Use the -p flag to set the port in ssh.",
        "credentials: see the vault",
        "Login with your usual credentials.",
        "log in as admin / root",
        "login: 2024/05/17",
        "Sign in: 10:30am",
        "My account: user/settings/Profile",
        "The bypass: Route 9 is faster.",
        "credentials: vault/prod-db2",
        "Я забыл пароль.",
        "A senha expirou.",
        "Het wachtwoord is verlopen.",
        "Hasło jest wymagane.",
        "das Passwort von Tom ist bekannt",
        "Москва и сор",
        "ssh-keygen -t ed25519 -N '' -f id",
        "nc -l -p 9000",
    ],
)
def test_the_same_words_in_ordinary_text_pass(text: str) -> None:
    assert find_sensitive(text) == []
    check_write(text, Source.USER)
