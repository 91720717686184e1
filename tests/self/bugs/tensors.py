from tests.self.bugs import Bug

BUGS = [
    Bug("tensors", "view needs a contiguous tensor",
        "    return _compute_stride(shape, strides, new_shape)",
        "    return contiguous_strides(new_shape) if is_contiguous(shape, strides) else None",
        mistake="view judged by contiguity alone"),
    Bug("tensors", "negative indices not wrapped in element_offset",
        "        if i < 0:\n            i += size\n        offset += i * stride",
        "        offset += i * stride"),
    Bug("tensors", "size-1 dims checked in is_contiguous",
        "        if size == 1:\n            continue\n        if stride != expected:",
        "        if stride != expected:"),
    Bug("tensors", "select forgets the storage offset",
        "        storage_offset + index * strides[d],",
        "        index * strides[d],"),
    # NumPy's .strides (and C pointer arithmetic) count bytes: the float32 element size creeps in
    Bug("tensors", "strides in bytes (× float32's 4 bytes)",
        "    strides = [1] * len(shape)\n",
        "    strides = [torch.float32.itemsize] * len(shape)\n", mistake="strides in bytes"),
]
