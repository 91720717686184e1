"""The tests hash's cache of parsed files (grader/provenance.py ``CACHE``) changes no hash: cold,
warm, unreadable or unwritable, the stamp is the one computed from the files themselves."""

import subprocess
import sys

from grader.paths import ROOT

HASH = "from grader.provenance import tests_hash; print(tests_hash())"


def _hash(cache_home) -> str:
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-c", HASH], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_cold_warm_garbage_and_unwritable_caches_give_one_hash(tmp_path):
    cold = _hash(tmp_path / "home")
    cache = tmp_path / "home" / "cs336-grader" / "syntax.json"
    assert cache.is_file() and len(cold) == 16
    assert _hash(tmp_path / "home") == cold                  # warm: read back
    cache.write_text("{not json")
    assert _hash(tmp_path / "home") == cold                  # garbage: recomputed
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _hash(blocker) == cold                            # its folder cannot be made: not kept
