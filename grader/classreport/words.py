"""How the class report says a student and an incident, on the page (html.py) and in the
terminal (``summary``) alike."""


def who(report: dict, key: str) -> str:
    """A student as the report names them: the roster's names and the upload's folder
    ("Ada Lovelace (submission_123)"), or the folder alone."""
    name = report.get("names", {}).get(key)
    return f"{name} ({key})" if name else key


def incident_how(i: dict) -> str:
    """What happened, how often: "it timed out ×2 / it ran out of memory"."""
    return " / ".join(how + (f" ×{k}" if k > 1 else "") for how, k in i["how"])


def incident_line(i: dict) -> str:
    """One incident: "optim.AdamW: it timed out ×2"."""
    return f"{i['what']}: {incident_how(i)}"
