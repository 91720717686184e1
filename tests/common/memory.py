"""memory: what its public and hidden tests share."""

# The recipes as the spec lists them (the stubs give them as data).
FP32_ADAMW = [("fp32 params", 4, "params"), ("fp32 grads", 4, "grads"),
              ("adam m (fp32)", 4, "optimizer"), ("adam v (fp32)", 4, "optimizer")]
BF16_MIXED_ADAMW = [("bf16 params", 2, "params"), ("fp32 master params", 4, "params"),
                    ("fp32 grads", 4, "grads"), ("adam m (fp32)", 4, "optimizer"),
                    ("adam v (fp32)", 4, "optimizer")]
BF16_MIXED_ADAMW_BF16_GRADS = [("bf16 params", 2, "params"), ("bf16 grads", 2, "grads"),
                               ("fp32 master params", 4, "params"), ("adam m (fp32)", 4, "optimizer"),
                               ("adam v (fp32)", 4, "optimizer")]
