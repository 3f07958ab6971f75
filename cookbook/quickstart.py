"""The core in one screen: capture, judge, recall, compact, forget, export, erase.

Run: uv run python cookbook/quickstart.py
"""

from __future__ import annotations

import tempfile

from memtend import Memory, SensitiveDataError, Source


def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-quickstart-")) as mem:
        alice = mem.user("alice")
        print("contact.method:", alice.set_fact("contact.method", "email").outcome)
        print("a guess:", alice.set_fact("contact.method", "sms", source=Source.INFERRED).outcome)
        alice.remember("Prefers short answers with the code first")
        alice.log("Migrated the billing database; step 3 failed")
        alice.add_rule("Never deploy on Fridays")
        try:
            alice.remember("my AWS key is AKIAIOSFODNN7EXAMPLE")
        except SensitiveDataError as exc:
            print("refused:", exc.kinds)
        for hit in alice.recall("how should I format replies?", k=2):
            print(f"{hit.score:.3f} {hit.label()}")
        print("would forget:", alice.forget(dry_run=True).count)
        print("exported records:", len(alice.export()["records"]))
        print("erased rows:", mem.erase_user("alice").total)


if __name__ == "__main__":
    main()
