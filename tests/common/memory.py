"""memory: what its public and hidden tests share: the recipes, and the named mistakes
(tests.checks.Mistake) its tests recognise in an answer."""

from tests.checks import Mistake

# The recipes as the spec lists them (the stubs give them as data).
FP32_ADAMW = [("fp32 params", 4, "params"), ("fp32 grads", 4, "grads"),
              ("adam m (fp32)", 4, "optimizer"), ("adam v (fp32)", 4, "optimizer")]
BF16_MIXED_ADAMW = [("bf16 params", 2, "params"), ("fp32 master params", 4, "params"),
                    ("fp32 grads", 4, "grads"), ("adam m (fp32)", 4, "optimizer"),
                    ("adam v (fp32)", 4, "optimizer")]
BF16_MIXED_ADAMW_BF16_GRADS = [("bf16 params", 2, "params"), ("bf16 grads", 2, "grads"),
                               ("fp32 master params", 4, "params"), ("adam m (fp32)", 4, "optimizer"),
                               ("adam v (fp32)", 4, "optimizer")]


# ---- named mistakes: each answer is the handout's formula with exactly that one slip ----------------
PLAIN_BYTES = "GB = 10^9 bytes, GiB = 2^30 bytes; the functions take and return plain bytes"
WHY_BYTES = ("total_hbm_bytes is a number of bytes already (80 GB is 80 * 10**9): divide it by the bytes per "
             "parameter, with no unit conversion; a GiB is 2^30 bytes, 7.4% more than a GB.")
MISTAKES = {
    "max_trainable_params": [
        Mistake("GB and GiB mixed up (the bytes converted to GiB, then counted as GB: 7% too few parameters)",
                lambda total, per_param: total / 2**30 * 10**9 / per_param, WHY_BYTES, "memory", PLAIN_BYTES),
        Mistake("GB and GiB mixed up (GB read as GiB: 7% too many parameters)",
                lambda total, per_param: total / 10**9 * 2**30 / per_param, WHY_BYTES, "memory", PLAIN_BYTES),
    ],
}


def mistakes(function: str) -> list[Mistake]:
    """The named mistakes that show in ``function``'s answers (``memory.<function>``)."""
    return MISTAKES.get(function.removeprefix("memory."), [])
