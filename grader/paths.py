"""Where things are. The grader always runs from a checkout (or a copy) of this repository."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEAM = ROOT / "tests" / "seam"
REFERENCE = ROOT / "reference"
STUBS = ROOT / "student_stubs"
SCHEMA = Path(__file__).with_name("results.schema.json")
TEST_DIRS = (ROOT / "tests" / "public", ROOT / "tests" / "hidden")  # the graded tests

if str(ROOT) not in sys.path:  # `tests.seam` is imported from the checkout
    sys.path.insert(0, str(ROOT))
