"""How the class report says a student and an incident, on the page (html.py) and in the
terminal (``summary``) alike."""


def who(report: dict, key: str) -> str:
    """A student as the report names them: the roster's names and the upload's folder
    ("Ada Lovelace (submission_123)"), or the folder alone."""
    name = report.get("names", {}).get(key)
    return f"{name} ({key})" if name else key


def incident_how(i: dict) -> str:
    """What happened, how often: "it timed out ×2 / it ran out of memory"."""
    from ..batch.attention import how_said
    return how_said(i["how"])


def too_large_by_student(similarity: dict) -> dict[str, list[str]]:
    """The modules the similarity pass left out as too large, by student (or archive file), in order."""
    out: dict[str, list[str]] = {}
    for t in similarity.get("too_large", []):
        out.setdefault(t["student"], []).append(t["problem"])
    return out


def too_large_limit() -> str:
    """The bound, as the page and the summary say it ("64 KB")."""
    from .similarity import LARGEST
    return f"{LARGEST // 1024} KB"
