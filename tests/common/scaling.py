"""scaling: what its public and hidden tests share."""

HOFFMANN_2022 = (1.69, 406.4, 410.7, 0.34, 0.28)  # E, A, B, alpha, beta (notes 004)
BESIROGLU_2024 = (1.8172, 482.01, 2085.43, 0.3478, 0.3658)
