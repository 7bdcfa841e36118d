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

# Every built-in and dtype of docs/ccn-language.md's tour, dropout of every layout and
# float dtype as an output (so that its mask is compared), reductions and a matmul of a
# sliced operand (empty blocks when the rows are fewer than the ranks).
BUILTINS = """
program tour(B, H) {
    param eps: f32 = 1e-5
    param p: f32 = 0.3
    param k: i32 = 3
    input x: f16[B, H] replicated
    input bias: bf16[H] replicated
    input idx: i32[H] replicated
    input d: f64[H] replicated
    input rows: f32[B, H] sliced(0)
    input g: f64[B, H] local
    input big: i64[H] replicated
    input w: f16[H, H] replicated

    a = sqrt(abs(x)) + rsqrt(abs(x) + 1) + exp(x) + log(abs(x) + 1)
    b = tanh(x) + relu(x) + gelu(x) + sigmoid(x)
    c = max(x, 0) + min(x, 1) + pow(x, 2)
    e = where(x > 0, x, -x)
    f = cast(x, bf16)
    gb = x + bias
    h = idx / 2
    i = idx * 2
    j = d + x
    l = layernorm(x, eps)
    m = rmsnorm(x, eps) * bias
    s = sum(x)
    n = norm(x)
    mx = amax(x)
    si = sum(idx)
    dr = dropout(x, p)
    q = x == 0
    ki = idx + k
    drs = dropout(rows * 2, p)
    drl = dropout(g, 0.5)
    drb = dropout(bias, p)
    ts = sum(rows)
    tn = norm(rows)
    ta = amax(rows)
    lr = layernorm(rows, eps)
    bi = big * 2 + k
    ci = cast(rows * 3, i32)
    mm = matmul(rows, w)
    output a, b, c, e, f, gb, h, i, j, l, m, s, n, mx, si, dr, q, ki
    output drs, drl, drb, ts, tn, ta, lr, bi, ci, mm
}
"""

# Every collective of docs/ccn-language.md section 7 (world and group), send included.
COLLECTIVES = """
program coll(B, H) {
    group node = blocks(2)
    input g: f32[B, H] local
    input xs: f32[B, H] sliced(-1)
    input seed: i64[H] local

    total = allreduce(sum, g)
    part = reducescatter(max, g)
    whole = allgather(xs)
    same = broadcast(seed, 1)
    innode = allreduce(avg, g, in node)
    twolevel = allreduce(sum, innode)
    nodeblk = reducescatter(sum, g, in node)
    nodeall = allgather(nodeblk, in node)
    nodebc = broadcast(seed, 0, in node)
    nxt = send(g, node, 1)
    low = allreduce(min, g)
    output total, part, whole, same, innode, twolevel, nodeall, nodebc, nxt, low
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

# A product for each GEMM epilogue kind (emitters/ccn/epilogues.py), in bf16, f16 and f32,
# column-sliced (the bias starts at the rank's first column), replicated, and a row-parallel
# partial sum (a rank whose K block is empty when K < R sums nothing), and two that take
# none: a product scaled before its bias, and one read twice.
EPILOGUES = """
program epilogues(B, K, H) {
    input x: bf16[B, K] replicated
    input w: bf16[K, H] sliced(-1)
    input b: bf16[H] replicated
    input xh: f16[B, K] replicated
    input wh: f16[K, H] sliced(-1)
    input bh: f16[H] replicated
    input x32: f32[B, K] replicated
    input w32: f32[K, H] replicated
    input b32: f32[H] replicated
    input xs: bf16[B, K] sliced(-1)
    input ws: bf16[K, H] sliced(0)
    h1 = matmul(x, w)
    e1 = b + h1
    h2 = matmul(x, w)
    e2 = gelu(h2)
    h3 = matmul(xh, wh)
    e3 = relu(h3)
    h4 = matmul(xh, wh)
    e4 = gelu(h4 + bh)
    h5 = matmul(x32, w32)
    e5 = relu(h5 + b32)
    h6 = matmul(x, w)
    e6 = h6 * 2 + b
    h7 = matmul(x32, w32)
    e7 = gelu(h7 + b32) + h7
    h8 = matmul(xs, ws)
    e8 = relu(h8 + b)
    output e1
    output e2
    output e3
    output e4
    output e5
    output e6
    output e7
    output e8
}
"""

# One head of attention, its rows (queries) sliced across ranks: softmax over each row of
# the scaled, masked scores (max-subtracted, so logits of magnitude 30 stay finite).
ATTENTION = """
program attention(T, D) {
    param scale: f32 = 4.0
    input q: bf16[T, D] sliced(0)
    input kt: bf16[D, T] replicated
    input v: bf16[T, D] replicated
    input mask: f32[T, T] sliced(0)
    input bias: f32[T, 1] replicated
    input cols: f32[T, T] sliced(1)
    input across: f32[1, T] replicated
    input k: bf16[T, D] replicated
    input x: f32[T, D, 3] sliced(1)
    input n: i32[T, D] local
    input of_rank: f32 local
    state steps: f32 replicated
    s = matmul(q, kt)
    p = softmax(s * scale + mask, -1)
    o = matmul(cast(p, bf16), v)
    h = softmax(o, 1)
    z = s * scale + mask
    m = amax(z, -1)
    e = exp(z - m)
    r = e / sum(e, -1)
    c = z - mean(z, 1) + bias
    w = cols * bias + across
    g = bias * across - mean(cast(v, f32), -1)
    output p
    output h
    kq = matmul(q, transpose(k, 0, 1))
    y = transpose(x * 2.0, 0, -1)
    yz = transpose(x, 1, 2) + 1.0
    nt = transpose(n, -1, 0)
    qt = transpose(q, 0, 1)
    xt = transpose(x, 0, 1)
    st = update(steps, steps + 1.0)
    sl = of_rank * 2.0 + st
    rs = r * st
    output m, r, c, w, g
    output kq, y, yz, nt, qt, xt, sl, rs
}
"""

# Batched matmuls, as multi-head attention uses them: heads sliced across ranks (projections
# from a replicated x, scores and values per head), every layout pair of the batched table
# (batch, rows, columns, the inner dim), bf16 (with a bias-and-gelu epilogue), mixed dtypes
# (widened), f64, an operand with fewer batch dims than the other, and one whose batch dim of
# extent 1 is repeated along the other's. Then the shapes
# around them: extents written as products, reshapes that keep a sliced dim, reductions
# along every dim (a sliced one gives local partials: the sum over heads, completed by an
# allreduce), ranges of a dim (queries, keys and values from one fused projection), and
# local values whose blocks are each rank's part (as_sliced), a matmul operand included.
MULTIHEAD = """
program multihead(T, D, H, E) {
    input x: bf16[T, D] replicated
    input wq: bf16[H, D, E] sliced(0)
    input wk: bf16[H, D, E] sliced(0)
    input wv: bf16[H, D, E] sliced(0)
    input bias: bf16[E] replicated
    input full: f32[H, E, T] replicated
    input rows: f32[H, T, E] sliced(1)
    input rep: f32[H, T, E] replicated
    input cols: f32[H, E, D] sliced(2)
    input ka: f32[H, T, E] sliced(2)
    input kb: f32[H, E, D] sliced(1)
    input back: f32[H, D, E] replicated
    input wo: f32[H, E, D] sliced(0)
    input big: f64[2, H, T, E] replicated
    input xh: f32[T, H * E] sliced(0)
    input z: f32[2 * T, E, H] sliced(1)
    input wqkv: bf16[H, D, 3 * E] sliced(0)
    input cube: f32[T, 2 * E, D] sliced(2)
    input one: f32[1, T, E] replicated
    input lq: f32[H, T, E] local
    q = matmul(x, wq)
    k = matmul(x, wk)
    v = matmul(x, wv)
    hb = matmul(x, wv)
    act = gelu(hb + bias)
    s = matmul(q, transpose(k, 1, 2))
    p = softmax(cast(s, f32) * 0.5, -1)
    o = matmul(cast(p, bf16), v)
    y = matmul(cast(o, f32), wo)
    sf = matmul(q, full)
    r = matmul(rows, full)
    c = matmul(rep, cols)
    l = matmul(ka, kb)
    lr = allreduce(sum, l)
    lm = matmul(l, back)
    lmr = allreduce(sum, lm)
    m4 = matmul(big, cast(full, f64))
    xs = reshape(xh, T, H, E)
    hx = amax(xs, 1) + sum(xs, -1) * 0.5
    zs = reshape(z, T, 2, E, H)
    zsum = allreduce(sum, sum(zs, 2))
    zmax = allreduce(max, amax(zs, 2))
    zmean = mean(zs, 1) - mean(zs, 3)
    heads = allreduce(sum, reshape(sum(y, 0), T, D))
    flat = reshape(transpose(rep, 0, 1), T, H * E) * 2.0
    output q, s, p, o, act, y, sf, r, c, lr, lmr, m4
    qkv = matmul(x, wqkv)
    qs = slice(qkv, -1, 0, E)
    ks = slice(qkv, 2, E, 2 * E)
    sq = matmul(qs, transpose(ks, 1, 2))
    ov = matmul(cast(softmax(cast(sq, f32), -1), bf16), slice(qkv, 2, 2 * E, 3 * E))
    half = slice(cube, 1, E, 2 * E) * 2.0 + slice(cube, 1, 0, 1)
    b1 = matmul(one, full)
    b2 = matmul(rows, cast(reshape(one, 1, E, T), f32))
    own = as_sliced(lq, 0) * cast(q, f32) + as_sliced(rep * 2.0, 0)
    ol = matmul(as_sliced(lq, 0), full)
    lt = as_sliced(lq - 1.0, 1) + rows
    output hx, zsum, zmax, zmean, heads, flat, qkv, sq, ov, half, b1, b2, own, ol, lt
}
"""
MULTIHEAD_SIZES = {"T": 7, "D": 5, "H": 5, "E": 4}  # H uneven over 2 and 3 ranks; E over 3

# Pipeline stages beyond the sample: a value every rank holds read inside a block, a
# collective with its group implied, a sliced value sent between stages (it stays sliced),
# a local value split over the block's ranks (as_sliced), a state and an update on the
# second stage, an output of each stage.
STAGED = """
program staged(B, H) {
    group stage = blocks(2)
    input x: f32[B, H] replicated
    on stage[0] {
        input w: f32[H, H] sliced(-1)
        input g: f32[B, H] local
        h = matmul(x, w)
        hs = gelu(h) * 2
        s = allreduce(sum, g)
        own = as_sliced(g, 0) * 3.0
        output s, own
    }
    on stage[1] {
        state acc: f32[B, H] replicated
        hin = send(hs, stage, 1)
        full = allgather(hin)
        sin = send(s, stage, 1)
        acc1 = update(acc, acc + full + sin + x)
        output full
    }
}
"""

# A micro-batched run that is no pipeline: a matmul of an expression (materialised with
# each micro-batch), an allreduce, row norms and softmax of the run's values, dropout,
# a broadcast; stages before and after the run, a scalar reduction after it. `piped`:
# overlap(P, C) where C's row norms read P: the norm of chunk c's rows can only be taken
# once chunk c is produced (the CPU backend once took it before the chunks, from rows not
# reduced yet).
MICROBATCHED = """
program mbatch(B, K, H) {
    param p: f32 = 0.2
    param eps: f32 = 0.00001
    input x: f16[B, K] sliced(-1)
    input w: f16[K, H] sliced(0)
    input u: f32[B, H] local
    input g: f16[H] replicated
    pre = x * 2
    part = matmul(pre * 0.5, w)
    y = allreduce(sum, part)
    n = layernorm(y, eps) * g + softmax(y, -1)
    d = dropout(n, p)
    bc = broadcast(u, 0)
    z = d + cast(bc, f16)
    s = sum(z)
    output z, s
}

schedule mb for mbatch {
    m = microbatch(part, z)
    tune(m, chunks = 3)
}

schedule piped for mbatch {
    o = overlap(y, n)
    tune(o, chunks = 3)
}
"""
