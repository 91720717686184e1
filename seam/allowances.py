"""What the honest-work checks let through on purpose: the allowances, by id, in one place.

A rule (seam/problems.py) says what a function may not hand to a library; the watch
(seam/honest.py) and the look for review (seam/review.py) then make exceptions, so that honest
code is neither charged nor noted. Each exception is a door: the allowance that lets an honest
``x.view(torch.float16)`` through also lets through whatever else fits its shape. So every
allowance is declared here, with where the code makes it, and needs an attack test beside it: a
submission that tries to gain through it, graded, asserting it is charged, noted or gains nothing,
marked ``@pytest.mark.attack("<id>")``. The course repository's attack-link check refuses an
allowance (or a rule) that no attack test names; its docs/rules.md says how to add one.
"""

from types import MappingProxyType

ALLOWANCES = MappingProxyType({
    "bit views": "seam/honest.py BIT_VIEWS: x.view(<narrow dtype>) reinterprets bits and is no cast into the format",
    "narrow to narrow": "seam/honest.py cast_in: an op whose tensors are all narrow already (a mask, an index, "
                        "arithmetic among narrow values) is no cast",
    "ordinary words": "seam/review.py _SPELLED: a string that spells an ordinary word (\"threading\", \"locate\", "
                      "\"modules\") is no note; only names no honest text spells are",
    "attributes of other objects": "seam/review.py OF_MODULE: .modules, .path, .system on anything but the module "
                                   "sys / os (self.modules, a Path's .path) is no note",
})
