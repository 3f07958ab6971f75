"""The import-time benchmark runs (one round) and sees what it should: chromadb loaded only by its own import."""

from __future__ import annotations

import pytest
from conftest import load_benchmark


@pytest.mark.slow  # one `import chromadb` in a fresh interpreter takes seconds
def test_import_time_benchmark_runs() -> None:
    figures = load_benchmark("import_time").run(repeat=1)
    assert set(figures) == {"python -c pass", "import memtend", "from memtend import Message", "memtend --help",
                            "import chromadb"}  # fmt: skip
    assert {name: row["chromadb_loaded"] for name, row in figures.items()} == {
        "python -c pass": False,
        "import memtend": False,
        "from memtend import Message": False,
        "memtend --help": False,
        "import chromadb": True,
    }
    assert figures["import chromadb"]["vs_chromadb"] == 1.0
    assert all(row["seconds"] > 0 for row in figures.values())
