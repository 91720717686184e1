from tests.self.shortcuts import Shortcut

SHORTCUTS = [
    Shortcut("tensors", "view_strides", "a real strided tensor asked for its view", '''
_checked_view_strides = view_strides


def view_strides(shape, strides, new_shape):
    _checked_view_strides(shape, strides, new_shape)  # the errors, as before
    x = torch.empty_strided(tuple(shape), tuple(strides))
    try:
        return tuple(x.view(tuple(new_shape)).stride())
    except RuntimeError:
        return None
'''),
    Shortcut("tensors", "contiguous_strides", "torch.empty(shape).stride() through getattr", '''
_checked_contiguous_strides = contiguous_strides


def contiguous_strides(shape):
    _checked_contiguous_strides(shape)
    return tuple(getattr(torch.empty(tuple(shape)), "stri" + "de")())
'''),
    Shortcut("tensors", "is_contiguous", "as_strided asked in a thread", '''
_checked_is_contiguous = is_contiguous


def is_contiguous(shape, strides):
    _checked_is_contiguous(shape, strides)
    import threading
    out = []
    t = threading.Thread(target=lambda: out.append(
        torch.empty(0).as_strided(tuple(shape), tuple(strides)).is_contiguous()))
    t.start()
    t.join()
    return bool(out[0])
'''),
    Shortcut("tensors", "transpose", "a real tensor transposed under DisableTorchFunction", '''
_checked_transpose = transpose


def transpose(shape, strides, dim0, dim1):
    _checked_transpose(shape, strides, dim0, dim1)
    with torch._C.DisableTorchFunction():
        x = torch.empty_strided(tuple(shape), tuple(strides)).transpose(dim0, dim1)
        return tuple(x.shape), tuple(x.stride())
'''),
]
