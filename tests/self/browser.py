"""A real headless browser (Debian's chromium; deploy/chromium/install.sh installs it) that
renders a page from disk to a PNG, with no network."""

import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str | None:
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


NO_BROWSER = "no chromium: run deploy/chromium/install.sh"


def require() -> None:
    """A command that ends in a screenshot stops here, before minutes of grading, without a browser."""
    if browser() is None:
        raise SystemExit(f"error: {NO_BROWSER} (this command ends in a screenshot of the page)")


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 2400) -> Path:
    """``page`` rendered to ``png`` (the first ``height`` pixels). A fresh profile, no network:
    the page must stand alone."""
    exe = browser()
    if exe is None:
        raise FileNotFoundError(NO_BROWSER)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--no-first-run", f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9",
                               f"--window-size={width},{height}", f"--screenshot={png}",
                               Path(page).resolve().as_uri()], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not Path(png).is_file():
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-1000:]}")
    return Path(png)
