from tests.self.shortcuts import Shortcut

SHORTCUTS = [
    Shortcut("einops", "split_heads", "view and transpose, no einops", '''
_checked_split_heads = split_heads


def split_heads(x, num_heads):
    _checked_split_heads(x, num_heads)
    b, s, hidden = x.shape
    return x.view(b, s, num_heads, hidden // num_heads).transpose(1, 2)
'''),
    Shortcut("einops", "attention_scores", "torch.einsum instead of einops", '''
_checked_attention_scores = attention_scores


def attention_scores(query, key):
    _checked_attention_scores(query, key)
    return torch.einsum("bihd,bjhd->bhij", query, key)
'''),
    Shortcut("einops", "merge_heads", "permute and reshape in a thread", '''
_checked_merge_heads = merge_heads


def merge_heads(x):
    _checked_merge_heads(x)
    import threading
    out = []
    b, h, s, d = x.shape
    t = threading.Thread(target=lambda: out.append(x.permute(0, 2, 1, 3).reshape(b, s, h * d)))
    t.start()
    t.join()
    return out[0]
'''),
    Shortcut("einops", "mean_over", "Tensor.mean under DisableTorchFunction", '''
_checked_mean_over = mean_over


def mean_over(x, axis):
    _checked_mean_over(x, axis)
    with torch._C.DisableTorchFunction():
        return x.mean(dim=AXES.index(axis))
'''),
]
