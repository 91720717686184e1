"""The probes' own helpers (seam/probes/__init__.py), apart from the problems they drive."""

import torch

from seam.probes import manual_seed


def test_a_probes_seed_draws_what_torch_manual_seed_draws():
    """A probe seeds the CPU generator alone where there is no CUDA: what any CPU code draws
    after it (nn.Linear's init, randn, a training batch without a generator) is unchanged."""
    draws = []
    for seed_with in (torch.manual_seed, manual_seed, torch.manual_seed, manual_seed):
        seed_with(11)
        draws.append((torch.randn(4), torch.nn.Linear(3, 2).weight.detach().clone(),
                      torch.randint(0, 1000, (3,))))
    for other in draws[1:]:
        assert all(torch.equal(a, b) for a, b in zip(draws[0], other))
    manual_seed(12)
    assert not torch.equal(torch.randn(4), draws[0][0])
