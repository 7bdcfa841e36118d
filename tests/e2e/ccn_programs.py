"""Small .ccn programs that the backend tests share (beside the samples)."""

# `b1` reads the old `a` after `a1` exists, so `a` keeps two buffers; `b` and `c` take
# their next values in place.
IN_PLACE = """
program swaps(N) {
    input g: f32[N] replicated
    state a: f32[N] replicated
    state b: f32[N] replicated
    state c: f32[N] replicated
    a1 = update(a, a + g)
    b1 = update(b, b * 0.5 + a)
    c1 = update(c, c + sum(b1) + amax(c))
}
"""

# The reduced input is an expression and the gathered value is a state's next value.
UNPLACED = """
program twin(N) {
    param lr: f32 = 0.5
    input g: f32[N] local
    state w: f32[N] replicated
    gsum = allreduce(sum, g * 2)
    w1 = update(w, w - lr * gsum)
    output w1
}

schedule fused for twin {
    rs, ag = split(gsum)
    agw = reorder(ag, w1)
    shard(w)
    fuse(rs, w1, agw)
}
"""

# Row norms whose epsilon is computed in the step (a reduction, and a stage's scalar), with
# a literal one beside them, over sliced rows.
NORMS = """
program norms(B, H) {
    param c: f32 = 0.5
    input x: f32[B, H] sliced(0)
    input y: f32[B, H] replicated
    e = abs(amax(y)) * 0.01 + c
    l = layernorm(x, e)
    m = rmsnorm(y, abs(sum(y)) + 1e-3) * 2
    n = layernorm(y, 1e-5)
    output l, m, n
}
"""
