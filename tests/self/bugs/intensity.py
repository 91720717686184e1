from tests.self.bugs import Bug

BUGS = [
    Bug("intensity", "matmul traffic misses the output write",
        "    bytes_moved = bytes_per_element * (b * d + d * f + b * f)",
        "    bytes_moved = bytes_per_element * (b * d + d * f)"),
    Bug("intensity", "matmul FLOPs counted as b·d·f (multiply-add = 1 FLOP)",
        "    flops = 2 * b * d * f",
        "    flops = b * d * f"),
    Bug("intensity", "ridge point inverted (bandwidth / peak)",
        "    return float(peak_flops / bandwidth)",
        "    return float(bandwidth / peak_flops)"),
    Bug("intensity", "elementwise traffic counts reads only",
        "    bytes_moved = bytes_read_per_element + bytes_written_per_element\n",
        "    bytes_moved = bytes_read_per_element\n"),
    Bug("intensity", "exactly at the ridge counted as compute-bound",
        "    return bool(intensity > ridge_point(peak_flops, bandwidth))",
        "    return bool(intensity >= ridge_point(peak_flops, bandwidth))"),
    Bug("intensity", "roofline adds compute and traffic time instead of taking the max",
        "    return float(max(flops / peak_flops, bytes_moved / bandwidth))",
        "    return float(flops / peak_flops + bytes_moved / bandwidth)"),
]
