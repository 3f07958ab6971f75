"""Test helpers for memtend and its framework adapters.

The isolation state machine checks that no user ever sees, changes or keeps another user's data, whatever
random operations run. It talks to a small :class:`Driver`; the core's is :class:`CoreDriver`. An adapter
suite writes a Driver for its surface and reuses the machine::

    from memtend.testing import Driver, Seen, make_isolation_machine

    class MyDriver(Driver):
        ...  # write, recall, list, export, erase (+ supports/operate for optional operations)

    TestMyIsolation = make_isolation_machine(lambda: MyDriver(...)).TestCase

:class:`HashEmbedder` is a deterministic embedding function (no model) for fast tests.

hypothesis is needed only to build a machine (``pip install 'memtend[testing]'``); importing this module does
not import it.
"""

from memtend.testing.core import CoreDriver
from memtend.testing.driver import VOLATILE, Driver, Seen, owner_ids, strip_keys, without_read_stats
from memtend.testing.embedder import HashEmbedder
from memtend.testing.isolation import (
    DAY,
    HOSTILE_KEYS,
    HOSTILE_NAMESPACES,
    HOSTILE_USER_IDS,
    INVALID_USER_IDS,
    LEDGER_NS,
    SESSION_ID,
    SESSION_NS,
    WORDS,
    DriverFactory,
    UserModel,
    expect_raises,
    make_isolation_machine,
    marker,
)

__all__ = [
    "DAY",
    "HOSTILE_KEYS",
    "HOSTILE_NAMESPACES",
    "HOSTILE_USER_IDS",
    "INVALID_USER_IDS",
    "LEDGER_NS",
    "SESSION_ID",
    "SESSION_NS",
    "VOLATILE",
    "WORDS",
    "CoreDriver",
    "Driver",
    "DriverFactory",
    "HashEmbedder",
    "Seen",
    "UserModel",
    "expect_raises",
    "make_isolation_machine",
    "marker",
    "owner_ids",
    "strip_keys",
    "without_read_stats",
]
