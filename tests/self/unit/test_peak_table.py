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
