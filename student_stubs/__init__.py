"""Your solution: fill in the problem modules here (see assignment/README.md).

The grader reads only the problem modules of this folder; import between them with
relative imports (``from .adamw_accounting import TransformerConfig``).
"""
