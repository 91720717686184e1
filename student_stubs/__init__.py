"""Your solution: fill in the problem modules here (see assignment/README.md).

The grader reads the problem modules of this folder and the helper modules they import from
it (a ``_util.py``: ``from ._util import clamp``), nothing else; import between them with relative
imports (``from .adamw_accounting import TransformerConfig``).
"""
