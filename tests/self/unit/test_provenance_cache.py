"""The tests hash's cache of parsed files (grader/provenance.py ``CACHE``) changes no hash: cold,
warm, unreadable or unwritable, the stamp (the tests hash and the verdicts hash, each of its own
reading of a test file) is the one computed from the files themselves."""

import json
import subprocess
import sys

from grader import provenance
from grader.paths import ROOT

HASH = "from grader.provenance import tests_hash, verdicts_hash; print(tests_hash(), verdicts_hash())"


def _hash(cache_home) -> str:
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-c", HASH], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_cold_warm_garbage_and_unwritable_caches_give_one_hash(tmp_path, monkeypatch):
    cold = _hash(tmp_path / "home")   # a fresh Python: nothing parsed yet, the cache found by XDG_CACHE_HOME
    cache = tmp_path / "home" / "cs336-grader" / "syntax.json"
    assert cache.is_file() and [len(h) for h in cold.split()] == [16, 16] and len(set(cold.split())) == 2

    def again(path=cache) -> str:  # the rest here, each read of the cache as a fresh process reads it
        monkeypatch.setattr(provenance, "CACHE", path)
        return f"{provenance.tests_hash.__wrapped__()} {provenance.verdicts_hash.__wrapped__()}"
    assert again() == cold                                   # warm: read back
    cache.write_text("{not json")
    assert again() == cold                                   # garbage: recomputed
    cache.write_text(json.dumps({k: "0" * 64 if k.startswith("unweighted:") else v
                                 for k, v in json.loads(cache.read_text()).items()}))
    assert again().split()[1] != cold.split()[1]             # (what the cache says is read)
    cache.write_text(json.dumps({k: 7 for k in json.loads(cache.read_text())}))
    assert again() == cold                                   # entries not a digest: recomputed
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert again(blocker / "cs336-grader" / "syntax.json") == cold   # its folder cannot be made: not kept
    assert not (blocker / "cs336-grader").exists()
