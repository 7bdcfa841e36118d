"""A machine's analysis: fused states, convergence, lookback, SIMD fit, the scheme `auto` picks."""
