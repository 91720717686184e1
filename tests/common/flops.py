"""flops: the named mistakes (tests.checks.Mistake) its hidden tests recognise."""

from tests.checks import Mistake

# training_flops with exactly one slip: the handout's C = 6·N·D with the backward pass left out.
MISTAKES = {
    "training_flops": [Mistake(
        "the backward pass forgotten (2·N·D)",
        lambda n_params, n_tokens: float(2 * n_params * n_tokens),
        "Training runs a forward pass (2 FLOPs per parameter per token) and a backward pass (4): "
        "6·N·D, not the 2·N·D of inference.",
        "flops", "so a training step costs 6 FLOPs per parameter per token")],
}


def mistakes(function: str) -> list[Mistake]:
    """The named mistakes that show in ``function``'s answers (``flops.<function>``)."""
    return MISTAKES.get(function, [])
