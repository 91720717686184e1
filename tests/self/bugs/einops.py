from tests.self.bugs import Bug

BUGS = [
    Bug("einops", "scores laid out seq2 before seq1 (Kᵀ·Q)",
        '"batch seq1 head dim, batch seq2 head dim -> batch head seq1 seq2"',
        '"batch seq1 head dim, batch seq2 head dim -> batch head seq2 seq1"'),
    Bug("einops", "hidden split as (dim heads) instead of (heads dim)",
        '"batch seq (heads dim) -> batch heads seq dim"',
        '"batch seq (dim heads) -> batch heads seq dim"'),
    Bug("einops", "split_heads copies (contiguous) instead of returning a view",
        '    return rearrange(x, "batch seq (heads dim) -> batch heads seq dim", heads=num_heads)',
        '    return rearrange(x, "batch seq (heads dim) -> batch heads seq dim", heads=num_heads).contiguous()'),
    Bug("einops", "merge_heads groups (dim heads): not the inverse of split_heads",
        '"batch heads seq dim -> batch seq (heads dim)"',
        '"batch heads seq dim -> batch seq (dim heads)"'),
    Bug("einops", "mean_over sums instead of averaging",
        '    return reduce(x, f"batch seq hidden -> {kept}", "mean")',
        '    return reduce(x, f"batch seq hidden -> {kept}", "sum")'),
    Bug("einops", "QKᵀ FLOPs count a multiply-add as 1",
        "    return int(2 * batch * heads * seq1 * seq2 * dim)",
        "    return int(batch * heads * seq1 * seq2 * dim)"),
]
