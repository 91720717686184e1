"""adamw_accounting: what its public and hidden tests (and flops') share."""

from seam import Struct


def config(vocab_size, context_length, num_layers, d_model, num_heads, d_ff) -> Struct:
    """A TransformerConfig, passed by value."""
    return Struct("TransformerConfig", dict(vocab_size=vocab_size, context_length=context_length,
                                            num_layers=num_layers, d_model=d_model,
                                            num_heads=num_heads, d_ff=d_ff))
