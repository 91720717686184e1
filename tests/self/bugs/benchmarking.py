from tests.self.bugs import Bug

BUGS = [
    Bug("benchmarking", "sparse bf16 peak for the H100",
        '"H100 SXM": {torch.bfloat16: 989.5e12, torch.float16: 989.5e12,',
        '"H100 SXM": {torch.bfloat16: 1979e12, torch.float16: 1979e12,', mistake="the 2:4-sparse peak"),
    Bug("benchmarking", "timing includes the warm-up",
        "    for _ in range(warmup):\n        a @ b\n    if on_cuda:\n"
        "        torch.cuda.synchronize(device)  # the warm-up must be finished before t0\n"
        "    t0 = time.perf_counter()\n",
        "    if on_cuda:\n        torch.cuda.synchronize(device)\n    t0 = time.perf_counter()\n"
        "    for _ in range(warmup):\n        a @ b\n"),
    Bug("benchmarking", "no synchronize before reading the clock",
        "    if on_cuda:\n        torch.cuda.synchronize(device)  # wait for the timed kernels, not just their launch\n",
        "", mistake="timing without torch.cuda.synchronize()"),
    Bug("benchmarking", "divides by trials twice",
        "return float((t1 - t0) / trials)",
        "return float((t1 - t0) / trials / trials)"),
    Bug("benchmarking", "FLOP count m·k·n instead of 2·m·k·n",
        "return mfu(2 * m * k * n, seconds, peak)",
        "return mfu(m * k * n, seconds, peak)"),
    Bug("benchmarking", "H100 NVL read as the SXM card (plain H100 rule tried first)",
        '    ("H100 NVL", "H100 NVL"),\n    ("H100 PCIE", "H100 PCIe"),\n    ("H100", "H100 SXM"),\n',
        '    ("H100", "H100 SXM"),\n    ("H100 NVL", "H100 NVL"),\n    ("H100 PCIE", "H100 PCIe"),\n'),
]
