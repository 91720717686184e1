"""The similarity pass (grader/classreport/similarity.py) on a class that writes the standard
AdamW: the same pairs on every run whatever PYTHONHASHSEED says, and independent standard
solutions are not taken for copies while a renamed copy of a distinctive one ranks first."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from grader.classreport import similarity
from grader.classreport.similarity import REFERENCE_NAME, similar
from tests.self.synthetic_class import disguise

ROOT = Path(__file__).resolve().parents[3]
STUB = (ROOT / "student_stubs" / "optim.py").read_text()
REFERENCE = (ROOT / "reference" / "optim.py").read_text()

# The standard AdamW as students write it from the paper or torch's docs: each part in one of the
# few ways people write it, each student choosing each part apart (their own combination).
HEAD = ["import math\nimport torch\n", "import torch\nimport math\nfrom torch import Tensor\n",
        "from __future__ import annotations\nimport math\n\nimport torch\n"]
INIT = [
    """class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)
""",
    """class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        if lr < 0:
            raise ValueError(f"invalid learning rate {lr}")
        if not 0 <= betas[0] < 1 or not 0 <= betas[1] < 1:
            raise ValueError(f"invalid betas {betas}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})
""",
    """class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        super(AdamW, self).__init__(params, defaults)
"""]
CLOSURE = [
    """    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
""",
    """    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
"""]
LOOP = [
    """        for group in self.param_groups:
            lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
""",
    """        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            eps = group["eps"]
            wd = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
"""]
STATE = [
    """                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                t = state["step"]
""",
    """                if "step" not in state:
                    state["step"] = 0
                    state["m"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["v"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                m = state["m"]
                v = state["v"]
                state["step"] += 1
                t = state["step"]
"""]
MOMENTS = [
    """                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
""",
    """                m.lerp_(grad, 1 - beta1)
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
""",
    """                m.mul_(beta1).add_((1 - beta1) * grad)
                v.mul_(beta2).add_((1 - beta2) * grad * grad)
"""]
DECAY = ["                p.mul_(1 - lr * wd)\n",
         "                p.data.mul_(1 - lr * wd)\n",
         "                if wd != 0:\n                    p.add_(p, alpha=-lr * wd)\n"]
UPDATE = [
    """                bias1 = 1 - beta1 ** t
                bias2 = 1 - beta2 ** t
                step_size = lr * math.sqrt(bias2) / bias1
                p.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(eps), value=-step_size)
        return loss
""",
    """                m_hat = m / (1 - beta1 ** t)
                v_hat = v / (1 - beta2 ** t)
                p.sub_(lr * m_hat / (v_hat.sqrt() + eps))
        return loss
""",
    """                alpha = lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
                p.data.addcdiv_(m, v.sqrt() + eps, value=-alpha)
        return loss
"""]
BYTES = [
    """

def optimizer_state_bytes(optimizer):
    total = 0
    for state in optimizer.state.values():
        for value in state.values():
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total
""",
    """

def optimizer_state_bytes(optimizer):
    return sum(v.numel() * v.element_size() for s in optimizer.state.values() for v in s.values()
               if isinstance(v, torch.Tensor))
"""]

# A solution of its own: one function for the update, torch._foreach_ ops, the state in lists.
DISTINCTIVE = '''import math
import torch


def _adamw_update(params, grads, firsts, seconds, count, lr, b1, b2, eps, decay):
    """One AdamW update of parallel lists, all at once."""
    torch._foreach_mul_(params, 1.0 - lr * decay)
    torch._foreach_lerp_(firsts, grads, 1.0 - b1)
    torch._foreach_mul_(seconds, b2)
    torch._foreach_addcmul_(seconds, grads, grads, value=1.0 - b2)
    corrected = [s.div(1.0 - b2 ** count).sqrt_().add_(eps) for s in seconds]
    torch._foreach_addcdiv_(params, firsts, corrected, value=-lr / (1.0 - b1 ** count))


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.count = 0

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else torch.enable_grad()(closure)()
        self.count += 1
        for group in self.param_groups:
            live = [p for p in group["params"] if p.grad is not None]
            for p in live:
                if not self.state[p]:
                    self.state[p].update(first=torch.zeros_like(p), second=torch.zeros_like(p))
            firsts = [self.state[p]["first"] for p in live]
            seconds = [self.state[p]["second"] for p in live]
            _adamw_update(live, [p.grad for p in live], firsts, seconds, self.count, group["lr"],
                          *group["betas"], group["eps"], group["weight_decay"])
        return loss


def optimizer_state_bytes(optimizer):
    seen = {id(t): t.numel() * t.element_size() for s in optimizer.state.values()
            for t in s.values() if torch.is_tensor(t)}
    return sum(seen.values())
'''


def standard(rng: random.Random) -> str:
    return "".join(rng.choice(part) for part in (HEAD, INIT, CLOSURE, LOOP, STATE, MOMENTS, DECAY, UPDATE, BYTES))


def standard_class(n: int = 60, seed: int = 7) -> dict[str, str]:
    """``n`` students who each wrote the standard AdamW (their own combination of its common
    phrasings, reformatted), one who wrote DISTINCTIVE and one who copied it, renamed, reordered
    and reformatted."""
    rng = random.Random(seed)
    students = {f"s{i:03d}": disguise(standard(rng), rng.randrange(1 << 30), heavy=False) for i in range(n)}
    students["own"] = DISTINCTIVE
    students["copier"] = disguise(DISTINCTIVE, 11)
    return students


def test_independent_standard_solutions_are_no_copies_and_a_real_copy_ranks_first(monkeypatch):
    students = standard_class()
    pairs = similar("optim", students, STUB, REFERENCE)["pairs"]
    between = [p for p in pairs if not p["b"].startswith("/")]
    assert [(p["a"], p["b"]) for p in between] == [("copier", "own")], between
    assert between[0]["score"] >= 0.8
    # the class is one where the standard solutions look alike: every fingerprint weighed in full
    # (no common form), many of them are flagged and the copy is lost among them
    monkeypatch.setattr(similarity, "RING", len(students))
    plain = [p for p in similar("optim", students, STUB, REFERENCE)["pairs"] if not p["b"].startswith("/")]
    assert len(plain) >= 10 and ("copier", "own") in {(p["a"], p["b"]) for p in plain}, len(plain)


def test_a_copy_ring_smaller_than_the_common_form_is_found_whole():
    students = standard_class()
    ring = {f"ring{i}": disguise(DISTINCTIVE, 20 + i) for i in range(similarity.RING - 2)}
    pairs = similar("optim", students | ring, STUB, REFERENCE)["pairs"]
    found = {frozenset((p["a"], p["b"])) for p in pairs if not p["b"].startswith("/")}
    everyone = ["own", "copier", *ring]
    assert found == {frozenset((a, b)) for a in everyone for b in everyone if a < b}, found


def test_a_copy_of_the_reference_is_found_against_it_not_against_each_other():
    students = standard_class() | {"r1": disguise(REFERENCE, 1), "r2": disguise(REFERENCE, 2)}
    sides = {(p["a"], p["b"]) for p in similar("optim", students, STUB, REFERENCE)["pairs"]}
    assert {("r1", REFERENCE_NAME), ("r2", REFERENCE_NAME)} <= sides and ("r1", "r2") not in sides


RUN = """
import json, sys
from grader.classreport import similarity_of
sys.stdout.write(json.dumps(similarity_of(json.load(sys.stdin)), sort_keys=True))
"""


def test_the_pairs_are_the_same_byte_for_byte_whatever_the_hash_seed():
    """One class (built once, here), its pairs found by three processes of three hash seeds."""
    from tests.self.synthetic_class import make_class, variants
    pool = [v for v in variants() if v.problem in ("flops", "optim", "einops")]
    students = [{"key": s.key, "code": s.texts} for s in make_class(30, seed=5, pool=pool, copy_rate=0.3)]
    students += [{"key": k, "code": {"optim": t}} for k, t in standard_class(30).items()]
    outs = []
    for seed in ("0", "1", "12345"):
        proc = subprocess.run([sys.executable, "-c", RUN], cwd=ROOT, capture_output=True, text=True,
                              input=json.dumps(students), env={**os.environ, "PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert json.loads(outs[0])["pairs"], "nothing flagged: nothing compared"
    assert outs[1] == outs[0] and outs[2] == outs[0]
