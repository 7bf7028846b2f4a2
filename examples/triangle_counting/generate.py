#!/usr/bin/env python3
"""Generate the ActorProf paper's case study as real-format traces.

FA-BSP triangle counting (bale_actor's ``triangle_selector``, algorithm 0) on
an R-MAT graph, rows of the lower-triangular adjacency matrix L distributed
1D cyclic or 1D range over PEs. The messages are exactly those the program
sends; their times and the PAPI counters come from a simple cost model (see
README.md). Output: ``PE<i>_send.csv``, ``PE<i>_PAPI.csv``, ``overall.txt``,
``stdout.txt`` and ``generate.json``, written in chunks (bounded memory).

    python examples/triangle_counting/generate.py --scale 12 --num-pes 16 \
        --pes-per-node 4 --distribution range -o /tmp/tc_range
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

RMAT_A, RMAT_B, RMAT_C = 0.57, 0.19, 0.19  # graph500; D = 1 - A - B - C = 0.05
MSG_BYTES = 16  # sizeof(TrianglePkt): two int64_t, w and vj
REQUEST = 0  # the only mailbox of the triangle selector
# Conveyors buffers hold ~10 KB of payload: the real histo PAPI trace handles
# runs of 1,254 8-byte messages from one source.
BUFFER_ITEMS = 10_032 // MSG_BYTES
EPOCH_S = 1_721_412_345  # CLOCK_REALTIME of the (fixed) start of the run
TSC_GHZ = 2.4  # rdtsc cycles per ns
LABEL = "Triangle counting"

# Cost model, nanoseconds (tracing on: each send and handled message writes a line).
NS_ROW = 40  # main loop over a local row
NS_NONZERO = 25  # one nonzero L[i, j]: owner and local index of j
NS_MSG_MAIN = 12  # build the packet
NS_SEND = 1_200  # selector send + trace line (jittered per nonzero)
NS_PROC = 1_100  # handle one message + PAPI read + trace line (jittered per buffer)
NS_LAT_INTRA, NS_LAT_INTER = 2_000, 6_000  # buffer latency within / across nodes
BYTES_PER_NS = 10.0  # 10 GB/s
NS_START_SPREAD = 50_000  # PEs enter the finish within 50 us of each other
NS_TERMINATION = 40_000  # termination detection after the last message

_TRACE_NAME = re.compile(r"PE\d+(_[^/]*)?_(send|PAPI|papi)\.(csv|dat)$")


@dataclass(frozen=True)
class Config:
    scale: int = 10
    edge_factor: int = 16
    num_pes: int = 16
    pes_per_node: int = 4
    distribution: str = "cyclic"
    variant: str = "bale"
    seed: int = 0
    label: str = LABEL
    chunk_lines: int = 1 << 19

    def check(self) -> None:
        if not 1 <= self.scale <= 30:
            raise ValueError("--scale must be in 1..30")
        if self.edge_factor < 1 or self.num_pes < 1 or self.pes_per_node < 1:
            raise ValueError("--edge-factor, --num-pes and --pes-per-node must be >= 1")
        if self.distribution not in ("cyclic", "range"):
            raise ValueError("--distribution must be cyclic or range")
        if self.variant not in ("bale", "strict"):
            raise ValueError("--variant must be bale or strict")
        if self.chunk_lines < 1:
            raise ValueError("--chunk-lines must be >= 1")


@dataclass
class Result:
    """What was written; every count is exact."""

    config: Config
    vertices: int
    edges_generated: int
    nonzeros: int
    triangles: int
    messages: int
    sent: list[int]
    received: list[int]
    files: dict[str, int] = field(default_factory=dict)  # name -> lines
    bytes_written: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["config"] = dict(self.config.__dict__)
        return d


# --------------------------------------------------------------------------- graph


def rmat_lower(scale: int, edge_factor: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Sorted keys ``row * n + col`` of L, the strictly lower triangle of an R-MAT graph.

    graph500's Kronecker generator (without its vertex relabelling, which would
    hide the degree skew the case study is about); self-loops and duplicate
    edges dropped, edges made undirected.
    """
    n, m = 1 << scale, edge_factor << scale
    ab, c_norm, a_norm = RMAT_A + RMAT_B, RMAT_C / (1 - RMAT_A - RMAT_B), RMAT_A / (RMAT_A + RMAT_B)
    ii = np.zeros(m, np.int64)
    jj = np.zeros(m, np.int64)
    for bit in range(scale):
        i_bit = rng.random(m) > ab
        j_bit = rng.random(m) > np.where(i_bit, c_norm, a_norm)
        ii |= i_bit.astype(np.int64) << bit
        jj |= j_bit.astype(np.int64) << bit
    hi, lo = np.maximum(ii, jj), np.minimum(ii, jj)
    keep = hi != lo
    return np.unique(hi[keep] * n + lo[keep]), m


def owner(v: np.ndarray, n: int, cfg: Config) -> np.ndarray:
    """PE holding row ``v``: ``v % N`` (cyclic) or contiguous blocks (range)."""
    if cfg.distribution == "cyclic":
        return v % cfg.num_pes
    return v // -(-n // cfg.num_pes)


def local_row(v: np.ndarray, n: int, cfg: Config) -> np.ndarray:
    if cfg.distribution == "cyclic":
        return v // cfg.num_pes
    return v % -(-n // cfg.num_pes)


def local_rows(n: int, cfg: Config) -> np.ndarray:
    """Number of rows of L each PE holds."""
    return np.bincount(owner(np.arange(n), n, cfg), minlength=cfg.num_pes)


# --------------------------------------------------------------------------- model


@dataclass
class Queue:
    """Receiver r's buffers in handling order; MAIN line goes before buffer ``main_at``."""

    bufs: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    main_at: int


@dataclass
class Model:
    """The run: nonzeros in sending order, buffers, timelines, all in ns from EPOCH_S."""

    n: int
    keys: np.ndarray  # sorted row * n + col of L
    ptr: np.ndarray  # CSR row pointer of L
    row: np.ndarray  # nonzeros in the senders' loop order (by PE, then row, then col)
    col: np.ndarray
    pos: np.ndarray  # position of the nonzero in its row
    mult: np.ndarray  # messages sent for this nonzero
    src: np.ndarray
    dst: np.ndarray
    first: np.ndarray  # ns: this nonzero's q-th message is sent at first + q * gap
    gap: np.ndarray
    nz_bounds: np.ndarray  # PE p's nonzeros are [nz_bounds[p], nz_bounds[p + 1])
    # pair order: nonzeros sorted by (src, dst); cum = inclusive cumsum of their mult
    pair_perm: np.ndarray
    pair_cum: np.ndarray
    # buffers (one per B messages of a (src, dst) pair)
    buf_src: np.ndarray
    buf_dst: np.ndarray
    buf_first: np.ndarray  # first message, index in the pair order
    buf_count: np.ndarray
    buf_dur: np.ndarray
    buf_arrival: np.ndarray
    t_start: np.ndarray
    t_done: np.ndarray
    t_end: np.ndarray
    sends_ns: np.ndarray
    main_ins: np.ndarray
    main_lst: np.ndarray
    sent: np.ndarray
    received: np.ndarray
    queues: list[Queue] = field(default_factory=list)


def build_model(cfg: Config) -> tuple[Model, int]:
    rng = np.random.default_rng(cfg.seed)
    keys, m_generated = rmat_lower(cfg.scale, cfg.edge_factor, rng)
    n, npes = 1 << cfg.scale, cfg.num_pes
    row_all, col_all = keys // n, keys % n
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(row_all, minlength=n), out=ptr[1:])
    pos_all = np.arange(keys.size) - ptr[row_all]

    # senders' loop order: for each PE, local rows ascending, columns ascending
    src_all = owner(row_all, n, cfg)
    order = np.argsort(src_all, kind="stable")
    row, col, pos, src = row_all[order], col_all[order], pos_all[order], src_all[order]
    # bale: for kk in row i while L[i, kk] <= j (w == j included); strict: kk < k
    mult = pos + 1 if cfg.variant == "bale" else pos
    dst = owner(col, n, cfg)
    nz_bounds = np.searchsorted(src, np.arange(npes + 1))
    sent = np.bincount(src, weights=mult, minlength=npes).astype(np.int64)
    received = np.bincount(dst, weights=mult, minlength=npes).astype(np.int64)

    # buffers: messages of each (src, dst) pair cut into runs of BUFFER_ITEMS
    pair = src * npes + dst
    pair_perm = np.argsort(pair, kind="stable")
    pair_cum = np.cumsum(mult[pair_perm])
    pair_total = np.bincount(pair, weights=mult, minlength=npes * npes).astype(np.int64)
    pair_start = np.cumsum(pair_total) - pair_total
    nbuf = -(-pair_total // BUFFER_ITEMS)
    buf_pair = np.repeat(np.arange(npes * npes), nbuf)
    buf_index = np.arange(buf_pair.size) - np.repeat(np.cumsum(nbuf) - nbuf, nbuf)
    buf_first = pair_start[buf_pair] + buf_index * BUFFER_ITEMS
    buf_count = np.minimum(BUFFER_ITEMS, pair_total[buf_pair] - buf_index * BUFFER_ITEMS)
    buf_src, buf_dst = buf_pair // npes, buf_pair % npes

    # random draws, in a fixed order, at nonzero / buffer / PE level only, so
    # the files do not depend on the chunk size
    t_start = rng.integers(0, NS_START_SPREAD, npes)
    send_ns = np.rint(NS_SEND * rng.lognormal(0.0, 0.25, row.size)).astype(np.int64)
    stall_w = mult * rng.exponential(1.0, row.size)
    buf_dur = np.rint(buf_count * NS_PROC * rng.lognormal(0.0, 0.15, buf_pair.size))
    buf_dur = buf_dur.astype(np.int64)
    lat_jit = rng.lognormal(0.0, 0.3, buf_pair.size)
    end_jit = rng.integers(0, 3_000, npes)

    has_nz = nz_bounds[1:] > nz_bounds[:-1]
    # sender timelines. A PE that sends handles its incoming buffers inside its
    # send calls (the runtime progresses Conveyors there), so that time is
    # spread over its sends as stalls; a PE that never sends handles them after done.
    handle_ns = np.bincount(buf_dst, weights=buf_dur, minlength=npes).astype(np.int64)
    handle_ns[sent == 0] = 0
    w_cum = np.cumsum(stall_w)
    w_cum -= np.concatenate([[0.0], w_cum])[nz_bounds[:-1]][src]  # running sum within the PE
    w_total = np.bincount(src, weights=stall_w, minlength=npes)
    with np.errstate(invalid="ignore", divide="ignore"):
        stall_cum = np.nan_to_num(np.rint(handle_ns[src] * (w_cum / w_total[src])))
    stall = np.diff(stall_cum.astype(np.int64), prepend=0)  # sums to handle_ns per PE
    stall[nz_bounds[:-1][has_nz]] = stall_cum.astype(np.int64)[nz_bounds[:-1][has_nz]]
    lrow = local_row(row, n, cfg)
    prev = np.empty_like(lrow)
    prev[1:] = lrow[:-1]
    prev[nz_bounds[:-1][nz_bounds[:-1] < row.size]] = -1
    pre = NS_ROW * (lrow - prev) + NS_NONZERO
    gap = NS_MSG_MAIN + send_ns
    cost = pre + mult * gap + stall
    cum = np.cumsum(cost)
    seg0 = np.concatenate([[0], cum])[nz_bounds[:-1]]
    first = t_start[src] + (cum - cost) - seg0[src] + pre
    nrows = local_rows(n, cfg)
    last_lrow = np.full(npes, -1)
    last_lrow[has_nz] = lrow[nz_bounds[1:][has_nz] - 1]
    tail = NS_ROW * (nrows - 1 - last_lrow)
    main_ns = np.bincount(src, weights=pre + mult * NS_MSG_MAIN, minlength=npes) + tail
    sends_ns = np.bincount(src, weights=mult * send_ns + stall, minlength=npes)
    sends_ns = sends_ns.astype(np.int64)
    t_done = t_start + main_ns.astype(np.int64) + sends_ns

    # flush: a full buffer leaves with its last message, the rest at done
    last = buf_first + buf_count - 1
    kp = np.searchsorted(pair_cum, last, side="right")
    k = pair_perm[kp]
    q = last - (pair_cum[kp] - mult[k])
    flush = np.where(buf_count == BUFFER_ITEMS, first[k] + q * gap[k], t_done[buf_src])
    node = np.arange(npes) // cfg.pes_per_node
    lat = np.where(node[buf_src] == node[buf_dst], NS_LAT_INTRA, NS_LAT_INTER) * lat_jit
    arrival = flush + np.rint(lat + buf_count * MSG_BYTES / BYTES_PER_NS).astype(np.int64)

    nnz_pe = np.diff(nz_bounds)
    main_ins = 14 * nrows + 23 * nnz_pe + 17 * sent
    main_lst = 5 * nrows + 9 * nnz_pe + 7 * sent
    model = Model(
        n=n,
        keys=keys,
        ptr=ptr,
        row=row,
        col=col,
        pos=pos,
        mult=mult,
        src=src,
        dst=dst,
        first=first,
        gap=gap,
        nz_bounds=nz_bounds,
        pair_perm=pair_perm,
        pair_cum=pair_cum,
        buf_src=buf_src,
        buf_dst=buf_dst,
        buf_first=buf_first,
        buf_count=buf_count,
        buf_dur=buf_dur,
        buf_arrival=arrival,
        t_start=t_start,
        t_done=t_done,
        t_end=np.zeros(npes, np.int64),
        sends_ns=sends_ns,
        main_ins=main_ins,
        main_lst=main_lst,
        sent=sent,
        received=received,
    )
    model.queues = [receiver_queue(model, r, sent[r] > 0) for r in range(npes)]
    finish = [int(q.finish[-1]) for q in model.queues if q.finish.size]
    model.t_end = max([*finish, int(t_done.max())]) + NS_TERMINATION + end_jit
    return model, m_generated


def receiver_queue(model: Model, r: int, sends: bool) -> Queue:
    """Single-server queue (max-plus recurrence, vectorised) of the buffers sent to r."""
    bufs = np.flatnonzero(model.buf_dst == r)
    arr = model.buf_arrival[bufs].copy()
    order = np.lexsort((bufs, arr))
    bufs, arr = bufs[order], arr[order]
    dur = model.buf_dur[bufs]
    free = model.t_start[r] if sends else model.t_done[r]
    t_done = model.t_done[r]

    def run(arr: np.ndarray) -> np.ndarray:
        c = np.cumsum(dur)
        finish: np.ndarray = np.maximum(np.maximum.accumulate(arr - (c - dur)), free) + c
        return finish

    finish = run(arr)
    # done(0) is not preempted: a buffer handled across it starts after it
    main_at = int(np.searchsorted(finish, t_done, side="right"))
    if main_at < bufs.size and finish[main_at] - dur[main_at] < t_done:
        arr[main_at] = t_done + 1_000
        finish = run(arr)
    return Queue(bufs=bufs, start=finish - dur, finish=finish, main_at=main_at)


# --------------------------------------------------------------------------- formatting


def _decimal(v: np.ndarray, width: int) -> np.ndarray:
    """``%d`` of non-negative integers, right-aligned in ``width`` bytes, NUL-padded."""
    out = np.zeros((v.size, width), np.uint8)
    v = v.astype(np.int64)
    for c in range(width - 1, -1, -1):
        live = v > 0
        v, d = np.divmod(v, 10)
        out[:, c] = np.where(live | (c == width - 1), d + 48, 0)
    return out


_DIG3 = np.array([list(f"{i:03d}".encode()) for i in range(1000)], np.uint8)  # "007"
_DIG3_NZ = _decimal(np.arange(1000), 3)  # "\0\07"
_DIG3_HI = _DIG3_NZ.copy()
_DIG3_HI[0] = 0  # a zero high part prints nothing


class Lines:
    """Vectorised printf: a uint8 matrix, one row per line, NUL bytes squeezed out."""

    def __init__(self, n: int, widths: list[int]) -> None:
        self.buf = np.zeros((n, sum(widths)), np.uint8)
        self.cols = np.cumsum([0, *widths])
        self.i = 0

    def _next(self) -> np.ndarray:
        a, b = self.cols[self.i], self.cols[self.i + 1]
        self.i += 1
        return self.buf[:, a:b]

    def table(self, rows: np.ndarray, idx: np.ndarray) -> None:
        self._next()[:] = rows[idx]

    def number(self, v: np.ndarray) -> None:  # %d of non-negative integers
        out = self._next()
        width = out.shape[1]
        if width <= 3:
            out[:] = _DIG3_NZ[v][:, 3 - width :]
            return
        if width > 6:
            out[:] = _decimal(v, width)
            return
        hi, lo = np.divmod(v, 1000)
        out[:, -3:] = _DIG3[lo]
        small = hi == 0
        out[small, -3:] = _DIG3_NZ[lo[small]]
        out[:, :-3] = _DIG3_HI[hi][:, 6 - width :]

    def clock(self, ns: np.ndarray) -> None:  # %lf of CLOCK_REALTIME, from ns after EPOCH_S
        out = self._next()
        sec, us = np.divmod(ns // 1000, 1_000_000)
        s0 = int(sec.min())
        secs = [f"{EPOCH_S + s:010d}" for s in range(s0, int(sec.max()) + 1)]
        out[:, :10] = prefix_table(secs)[sec - s0]
        out[:, 10] = ord(".")
        hi, lo = np.divmod(us, 1000)
        out[:, 11:14] = _DIG3[hi]
        out[:, 14:17] = _DIG3[lo]

    def const(self, text: bytes) -> None:
        self._next()[:] = np.frombuffer(text, np.uint8)

    def write(self, f: BinaryIO) -> int:
        flat = self.buf.reshape(-1)
        data = flat[flat != 0]
        f.write(data.tobytes())
        return int(data.size)


def prefix_table(texts: list[str]) -> np.ndarray:
    width = max(len(t) for t in texts)
    table = np.zeros((len(texts), width), np.uint8)
    for i, t in enumerate(texts):
        table[i, : len(t)] = np.frombuffer(t.encode(), np.uint8)
    return table


def int_width(v: np.ndarray) -> int:
    return len(str(int(v.max()))) if v.size else 1


# --------------------------------------------------------------------------- writers


def _chunks(weights: np.ndarray, limit: int) -> Iterator[tuple[int, int]]:
    """Consecutive ranges of items whose weights sum to at most ``limit`` (>= 1 item)."""
    cum = np.cumsum(weights)
    a = 0
    while a < weights.size:
        base = cum[a - 1] if a else 0
        b = max(int(np.searchsorted(cum, base + limit, side="right")), a + 1)
        yield a, b
        a = b


def write_sends(model: Model, cfg: Config, p: int, f: BinaryIO) -> tuple[int, int]:
    """``PE<p>_send.csv``: one line per message, in the sender's loop order."""
    node = np.arange(cfg.num_pes) // cfg.pes_per_node
    table = prefix_table(
        [f"{node[p]}, {p}, {node[d]}, {d}, {MSG_BYTES}, " for d in range(cfg.num_pes)]
    )
    a0, b0 = model.nz_bounds[p], model.nz_bounds[p + 1]
    lines = nbytes = 0
    for a, b in _chunks(model.mult[a0:b0], cfg.chunk_lines):
        mult = model.mult[a0 + a : a0 + b]
        nz = np.repeat(np.arange(a0 + a, a0 + b), mult)
        if not nz.size:  # strict variant: rows with one nonzero send nothing
            continue
        q = np.arange(nz.size) - np.repeat(np.cumsum(mult) - mult, mult)
        out = Lines(nz.size, [table.shape[1], 17, 1])
        out.table(table, model.dst[nz])
        out.clock(model.first[nz] + q * model.gap[nz])
        out.const(b"\n")
        nbytes += out.write(f)
        lines += nz.size
    return lines, nbytes


def _handled(model: Model, bufs: np.ndarray) -> dict[str, np.ndarray]:
    """Every message of the given buffers, in handling order, with its PAPI counters."""
    count = model.buf_count[bufs]
    ends = np.cumsum(count)
    rel = np.arange(int(ends[-1])) - np.repeat(ends - count, count)
    msg = np.repeat(model.buf_first[bufs], count) + rel  # index in the pair order
    kp = np.searchsorted(model.pair_cum, msg, side="right")
    k = model.pair_perm[kp]
    q = msg - (model.pair_cum[kp] - model.mult[k])  # the q-th message of nonzero k
    i, j = model.row[k], model.col[k]
    w = model.keys[model.ptr[i] + q] % model.n  # pkg.w = L[i, kk]
    # process(): scan row j of L until w is found or passed
    key = j * model.n + w
    at = np.searchsorted(model.keys, key)
    stop = at < model.ptr[j + 1]
    found = stop & (model.keys[np.minimum(at, model.keys.size - 1)] == key)
    iters = at - model.ptr[j] + stop
    mix = (msg.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(62)
    tot = 52 + 7 * iters + 4 * found + mix.astype(np.int64)
    lst = 18 + 2 * iters + found
    # each message ends at a point of its buffer's handling time proportional to its cost
    weight = 700 + tot
    cw = np.cumsum(weight)
    first = ends - count
    before = np.repeat(cw[first] - weight[first], count)
    total = np.repeat(np.add.reduceat(weight, first), count)
    return {
        "count": count,
        "src": np.repeat(model.buf_src[bufs], count),
        "tot": tot,
        "lst": lst,
        "found": found,
        "num": cw - before,
        "den": total,
    }


def _time_text(ns: int) -> str:
    us = ns // 1000
    return f"{EPOCH_S + us // 1_000_000}.{us % 1_000_000:06d}"


def write_papi(model: Model, cfg: Config, r: int, f: BinaryIO) -> tuple[int, int, int]:
    """``PE<r>_PAPI.csv``: one line per handled message, the MAIN line at done(0)."""
    queue = model.queues[r]
    node = np.arange(cfg.num_pes) // cfg.pes_per_node
    table = prefix_table(
        [f"{node[s]}, {s}, {node[r]}, {r}, {MSG_BYTES}, {REQUEST}, 0, " for s in range(cfg.num_pes)]
    )
    main_line = (
        f"{node[r]}, {r}, {node[r]}, {r}, 0, -1, {model.sent[r]}, {model.main_ins[r]}, "
        f"{model.main_lst[r]}, {_time_text(int(model.t_done[r]))}\n"
    ).encode()
    lines = nbytes = triangles = 0
    for part, (a0, b0) in enumerate(((0, queue.main_at), (queue.main_at, queue.bufs.size))):
        if part:
            f.write(main_line)
            lines, nbytes = lines + 1, nbytes + len(main_line)
        bufs = queue.bufs[a0:b0]
        for a, b in _chunks(model.buf_count[bufs], cfg.chunk_lines):
            h = _handled(model, bufs[a:b])
            start = np.repeat(queue.start[a0 + a : a0 + b], h["count"])
            dur = np.repeat(model.buf_dur[bufs[a:b]], h["count"])
            widths = [table.shape[1], int_width(h["tot"]), 2, int_width(h["lst"]), 2, 17, 1]
            out = Lines(start.size, widths)
            out.table(table, h["src"])
            out.number(h["tot"])
            out.const(b", ")
            out.number(h["lst"])
            out.const(b", ")
            out.clock(start + dur * h["num"] // h["den"])
            out.const(b"\n")
            nbytes += out.write(f)
            lines += start.size
            triangles += int(h["found"].sum())
    return lines, nbytes, triangles


def _cycles(ns: np.ndarray | int) -> np.ndarray:
    return np.rint(np.asarray(ns) * TSC_GHZ).astype(np.int64)


def overall_text(model: Model, cfg: Config, triangles: int) -> str:
    """The program's stdout with ``print_profiling(label)`` of every PE, interleaved."""
    npes = cfg.num_pes
    rng = np.random.default_rng([cfg.seed, 1])
    inside = _cycles(model.t_done - model.t_start)
    sends = _cycles(model.sends_ns)
    wait = _cycles(model.t_end - model.t_done)
    outside = inside + wait + rng.integers(8, 48, npes)  # rdtsc read at other instants
    process = _cycles(np.bincount(model.buf_dst, weights=model.buf_dur, minlength=npes))
    t_main, t_proc = inside - sends, process
    t_comm = sends + wait - t_proc
    t_total = t_main + t_comm + t_proc
    blocks = []
    for p in range(npes):
        tag = f"{cfg.label} [PE{p}]" if cfg.label else f"[PE{p}]"
        tot = t_total[p]
        blocks.append(
            [
                f"{tag} T_inside_finish (start - done): {inside[p]} cycles",
                f"{tag} T_wait (done - finish): {wait[p]} cycles",
                f"{tag} T_outside_finish (start - finish): {outside[p]} cycles",
                f"{tag} T_sends (count={model.sent[p]}): {sends[p]} cycles",
                f"{tag} T_send_in_process (count=0): 0 cycles",
                f"{tag} T_process (count={model.received[p]}): {process[p]} cycles",
                f"{tag} TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), "
                f"{t_main[p]}, {t_comm[p]}, {t_proc[p]}, {tot}",
                f"{tag} TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), "
                f"{t_main[p] / tot:.6f}, {t_comm[p] / tot:.6f}, {t_proc[p] / tot:.6f}",
            ]
        )
    # every PE prints when it leaves the finish: blocks come in any order and interleave
    when = rng.uniform(0, 60, npes)[:, None] + rng.uniform(0.5, 3, npes)[:, None] * np.arange(8)
    order = np.argsort(when.ravel(), kind="stable")
    profile = [blocks[i // 8][i % 8] for i in order]

    def opt(desc: str, flag: str, value: object) -> str:
        return f"{desc:<37}({flag})= {value}"

    head = [
        f"Running triangle on {npes} threads",
        opt("buf_cnt (number of buffer pkgs)", "-b", BUFFER_ITEMS),
        opt("R-MAT scale (2^s vertices)", "-s", cfg.scale),
        opt("edge factor", "-e", cfg.edge_factor),
        opt("R-MAT A, B, C", "-r", f"{RMAT_A}, {RMAT_B}, {RMAT_C}"),
        opt("row layout (0 cyclic, 1 range)", "-d", int(cfg.distribution == "range")),
        opt("random seed", "-S", cfg.seed),
        f"L: {model.n} rows, {model.keys.size} nonzeros, {int(model.sent.sum())} pushes",
    ]
    seconds = (int(model.t_end.max()) - int(model.t_start.min())) / 1e9
    tail = [f"Found {triangles} triangles", f"{seconds:10.3f} seconds"]
    return "\n".join([*head, *profile, *tail])  # bale prints the time without a newline


def stdout_text(cfg: Config) -> str:
    lines = ["Logical actor message trace enabled"]
    lines += [f"PE:{p}, Node {p // cfg.pes_per_node}" for p in range(cfg.num_pes)]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- driver


def _clear(out_dir: Path, overwrite: bool) -> None:
    old = [p for p in out_dir.iterdir() if _TRACE_NAME.match(p.name)]
    old += [out_dir / n for n in ("overall.txt", "stdout.txt") if (out_dir / n).exists()]
    if old and not overwrite:
        raise FileExistsError(
            f"{out_dir} already holds a trace ({old[0].name}, ...): "
            "pass --overwrite to replace it, or choose another --output-dir"
        )
    for p in old:
        p.unlink()


_WORK: tuple[Model, Config, Path] | None = None  # shared with forked workers


def _write_file(task: tuple[int, str, str, int]) -> tuple[str, int, int, int]:
    assert _WORK is not None
    model, cfg, out = _WORK
    _, name, kind, pe = task
    with open(out / name, "wb") as f:
        if kind == "send":
            return (name, *write_sends(model, cfg, pe, f), 0)
        return (name, *write_papi(model, cfg, pe, f))


def _logged(
    results: Iterator[tuple[str, int, int, int]], log: Any
) -> Iterator[tuple[str, int, int, int]]:
    for r in results:
        log(f"{r[0]}: {r[1]} lines")
        yield r


def _file_order(name: str) -> tuple[int, int]:
    pe = int(re.findall(r"\d+", name)[0])
    return (0 if name.endswith("send.csv") else 1, pe)


def generate(
    cfg: Config,
    out_dir: str | Path,
    *,
    overwrite: bool = False,
    progress: bool = False,
    jobs: int = 1,
) -> Result:
    """Write the traces of one simulated run into ``out_dir``; return what was written."""
    cfg.check()
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clear(out, overwrite)
    model, m_generated = build_model(cfg)
    res = Result(
        config=cfg,
        vertices=model.n,
        edges_generated=m_generated,
        nonzeros=int(model.keys.size),
        triangles=0,
        messages=int(model.sent.sum()),
        sent=model.sent.tolist(),
        received=model.received.tolist(),
    )

    def log(msg: str) -> None:
        if progress:
            print(f"[{time.perf_counter() - t0:7.1f} s] {msg}", file=sys.stderr, flush=True)

    log(f"graph: {model.n} vertices, {res.nonzeros} nonzeros in L, {res.messages} messages")
    # biggest files first, so that workers finish together
    tasks = [(int(model.sent[p]), f"PE{p}_send.csv", "send", p) for p in range(cfg.num_pes)]
    tasks += [(int(model.received[r]), f"PE{r}_PAPI.csv", "papi", r) for r in range(cfg.num_pes)]
    tasks.sort(key=lambda t: -t[0])
    global _WORK
    _WORK = (model, cfg, out)
    try:
        if jobs > 1 and "fork" in mp.get_all_start_methods():
            with mp.get_context("fork").Pool(min(jobs, len(tasks))) as pool:
                done = list(_logged(pool.imap_unordered(_write_file, tasks), log))
        else:
            done = list(_logged(map(_write_file, tasks), log))
    finally:
        _WORK = None
    for name, lines, nbytes, found in sorted(done, key=lambda d: _file_order(d[0])):
        res.files[name] = lines
        res.bytes_written += nbytes
        res.triangles += found
    for name, text in (
        ("overall.txt", overall_text(model, cfg, res.triangles)),
        ("stdout.txt", stdout_text(cfg)),
    ):
        data = text.encode()
        (out / name).write_bytes(data)
        res.files[name] = text.count("\n") + (not text.endswith("\n"))
        res.bytes_written += len(data)
    res.seconds = round(time.perf_counter() - t0, 3)
    (out / "generate.json").write_text(json.dumps(res.as_dict(), indent=1) + "\n")
    log(f"done: {res.bytes_written / 1e9:.3f} GB, {res.triangles} triangles")
    return res


def parse_args(argv: list[str] | None = None) -> tuple[Config, Path, bool, bool, int]:
    ap = argparse.ArgumentParser(
        description="Write real-format ActorProf traces of FA-BSP triangle counting "
        "on an R-MAT graph (the ActorProf paper's case study).",
    )
    ap.add_argument("-o", "--output-dir", type=Path, required=True, help="trace folder to write")
    ap.add_argument("--scale", type=int, default=10, help="2^scale vertices (default 10)")
    ap.add_argument("--edge-factor", type=int, default=16, help="edges per vertex (default 16)")
    ap.add_argument("--num-pes", type=int, default=16, help="PEs (default 16)")
    ap.add_argument("--pes-per-node", type=int, default=4, help="PEs per node (default 4)")
    ap.add_argument(
        "--distribution",
        choices=("cyclic", "range"),
        default="cyclic",
        help="rows of L: row i on PE i %% N (cyclic, default) or contiguous blocks (range)",
    )
    ap.add_argument(
        "--variant",
        choices=("bale", "strict"),
        default="bale",
        help="bale: messages for every L[i,k] with k <= j, as bale_actor's triangle_selector "
        "(default); strict: k < j only",
    )
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--label", default=LABEL, help=f"print_profiling prefix (default {LABEL!r})")
    ap.add_argument(
        "--chunk-lines",
        type=int,
        default=Config.chunk_lines,
        help="lines formatted per write; bounds memory, does not change the files",
    )
    ap.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="worker processes writing files (default 1: the writes are I/O bound on a "
        "small machine); the files are the same whatever N",
    )
    ap.add_argument("--overwrite", action="store_true", help="replace a trace in the folder")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    a = ap.parse_args(argv)
    cfg = Config(
        scale=a.scale,
        edge_factor=a.edge_factor,
        num_pes=a.num_pes,
        pes_per_node=a.pes_per_node,
        distribution=a.distribution,
        variant=a.variant,
        seed=a.seed,
        label=a.label,
        chunk_lines=a.chunk_lines,
    )
    try:
        cfg.check()
    except ValueError as e:
        ap.error(str(e))
    return cfg, a.output_dir, a.overwrite, a.quiet, max(1, a.jobs)


def main(argv: list[str] | None = None) -> int:
    cfg, out, overwrite, quiet, jobs = parse_args(argv)
    try:
        res = generate(cfg, out, overwrite=overwrite, progress=not quiet, jobs=jobs)
    except FileExistsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for name in [*res.files, "generate.json"]:
        print(out / name)
    if not quiet:
        print(
            f"{res.messages:,} messages ({sum(res.files.values()):,} lines, "
            f"{res.bytes_written / 1e6:,.1f} MB) in {res.seconds:.1f} s; "
            f"{res.triangles:,} triangles",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
