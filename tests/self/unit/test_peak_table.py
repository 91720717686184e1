"""The peak FLOP/s table is stated once in reference/benchmarking.py and printed in the handout:
the two agree, every rule leads to an entry, every entry is reachable by its own key."""

import re

import torch

from grader.paths import ROOT
from reference.benchmarking import DEVICE_NAME_RULES, PEAK_FLOPS, peak_flops

HANDOUT = ROOT / "assignment" / "problems" / "benchmarking.md"


def handout_rows() -> dict[str, tuple[float, float]]:
    """{device key: (bf16, fp32)} from the handout's "Dense peaks" table."""
    text = HANDOUT.read_text().split("Dense peaks", 1)[1]
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.match(r"^[\d.]+e\d+", cells[1]):
            if rows:
                break   # the end of the table
            continue
        key = re.sub(r"\s*\(.*\)$", "", cells[0])
        rows[key] = (float(cells[1].split()[0]), float(cells[2].split()[0]))
    return rows


def test_handout_prints_the_reference_table():
    table = {key: (peaks[torch.bfloat16], peaks[torch.float32]) for key, peaks in PEAK_FLOPS.items()}
    assert handout_rows() == table


def test_fp16_peak_equals_bf16():
    assert all(p[torch.float16] == p[torch.bfloat16] for p in PEAK_FLOPS.values())


def test_rules_and_keys():
    assert {key for _, key in DEVICE_NAME_RULES} == set(PEAK_FLOPS)
    for key in PEAK_FLOPS:
        assert peak_flops(key, torch.bfloat16) == PEAK_FLOPS[key][torch.bfloat16], key


# A number in the nine hundreds with a unit of FLOP/s (e12, or TFLOP/s) is the H100's dense bf16
# peak wherever it appears; "1979e12 / 2" (the datasheet's sparse figure halved) is too. The
# lecture notes (assignment/notes/) are quoted as written: they round the peak to 989.
H100_MENTION = re.compile(r"(?<![\d.])(9\d\d(?:\.\d+)?)(?:e12|\s*TFLOP)|(?<![\d.])1979(?:e12)?\s*/\s*2\b")
SHARED_BY = ("assignment/problems/intensity.md", "assignment/problems/flops.md",
             "assignment/problems/benchmarking.md", "student_stubs/intensity.py", "student_stubs/flops.py",
             "student_stubs/benchmarking.py", "reference/intensity.py", "reference/flops.py",
             "reference/benchmarking.py")


def h100_mentions() -> dict[str, list[float]]:
    """{file: the H100 peaks it states, in FLOP/s} over the handout, the stubs and the reference."""
    files = [ROOT / "assignment" / "README.md", *sorted((ROOT / "assignment" / "problems").glob("*.md")),
             *sorted((ROOT / "student_stubs").glob("*.py")), *sorted((ROOT / "reference").glob("*.py"))]
    found = {}
    for path in files:
        values = [float(m.group(1)) * 1e12 if m.group(1) else 1979e12 / 2
                  for m in H100_MENTION.finditer(path.read_text())]
        if values:
            found[path.relative_to(ROOT).as_posix()] = values
    return found


def test_every_mention_of_the_h100_peak_is_the_tables():
    """The H100's peak is one number: the reference's table's, in the examples of intensity and
    flops too (ridge point, training time), in the handout, the stubs and the reference."""
    peak = PEAK_FLOPS["H100 SXM"][torch.bfloat16]
    found = h100_mentions()
    assert set(SHARED_BY) <= set(found), f"no mention of the H100's peak found in {set(SHARED_BY) - set(found)}"
    wrong = {path: values for path, values in found.items() if any(v != peak for v in values)}
    assert not wrong, f"the H100's peak is {peak:g} (reference/benchmarking.py's table); these say otherwise: {wrong}"
