"""The report's interactive PE x PE matrix: a pyramid embedded in the page.

The page embeds :class:`~actorprof.analyze.pyramid.MatrixPyramid` as JSON
(each array base64 of its little-endian bytes, in the smallest type that
holds it) and draws it with one inline script on a canvas: no library, no
network. Hover a cell: the PE (or PE range) pair, messages and bytes, and at
a pooled level the largest pair of the block. Click (or wheel) into a block
to see it at the next level, down to single PEs; the breadcrumb (or wheel
out) goes back. Where the page holds no finer view of a block, a click says
how to get one.

Test hook: ``report.html#probe=SRC,DST[;SRC,DST...]`` (first matrix of the
page), for each pair: back to all PEs, zoom with synthetic clicks (the
handlers a person triggers) to the finest view holding the pair, hover it
with a synthetic mouse move, and append the tooltip to the page as
``<output class="apm-probe" data-pair="SRC,DST">``, with ``data-block``
(PEs per cell), ``data-ready`` (milliseconds from navigation to the
explorers drawn) and ``data-load`` (to the load event). ``#look=SRC,DST``
hovers at the top level without zooming. ``data-top`` is where the matrix
is on the page (CSS pixels, for cropping a screenshot).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import numpy as np

from ..analyze.pyramid import MatrixPyramid
from ._html import esc, human_bytes

__all__ = ["EXPLORER_JS", "MatrixExplorer"]

_TYPES = {"u1": np.uint8, "u2": np.uint16, "u4": np.uint32, "f8": np.float64}


def _encode(values: np.ndarray) -> list[str]:
    for name, dtype in _TYPES.items():
        if values.dtype == dtype:
            raw = values.astype(np.dtype(dtype).newbyteorder("<"), copy=False).tobytes()
            return [name, base64.b64encode(raw).decode("ascii")]
    raise ValueError(f"cannot embed an array of {values.dtype}")


@dataclass(frozen=True)
class MatrixExplorer:
    """One phase's pyramid and where its trace is (for the "how to get it" line)."""

    pyramid: MatrixPyramid
    path: str
    budget_bytes: int

    def payload(self) -> dict[str, object]:
        """What the page's script reads (JSON)."""
        return {
            "n": self.pyramid.num_pes,
            "path": self.path,
            "levels": [
                {
                    "b": level.block,
                    "s": level.span,
                    "tiles": level.tiles,
                    "total": level.tiles_total,
                    "a": {name: _encode(a) for name, a in level.arrays().items()},
                }
                for level in self.pyramid.levels
            ],
        }

    def html(self, ident: str) -> str:
        levels = self.pyramid.levels
        data = json.dumps(self.payload(), separators=(",", ":")).replace("</", "<\\/")
        blocks = " -> ".join(
            "single PEs" if level.block == 1 else f"blocks of {level.block:,}" for level in levels
        )
        finer = levels[1:]
        if not finer:
            cover = "Every PE is one cell: nothing to zoom into."
        elif all(level.complete for level in finer):
            cover = "Every non-zero block can be zoomed into, down to single PEs."
        else:
            parts = [
                f"{level.tiles:,} of {level.tiles_total:,} blocks at "
                + ("single PEs" if level.block == 1 else f"blocks of {level.block:,}")
                for level in finer
            ]
            cover = (
                "Zoomed views embedded: "
                + "; ".join(parts)
                + f" (the busiest blocks first, within {human_bytes(self.budget_bytes)}"
                " of data); any other block: click it to see how to get it."
            )
        return (
            f'<div class="apm" id="{esc(ident)}">'
            '<div class="apm-bar"><button type="button" class="apm-back" disabled>'
            '&larr; zoom out</button><span class="apm-crumbs"></span>'
            '<label>colour: <select class="apm-mode">'
            '<option value="m">messages</option><option value="y">bytes</option>'
            '<option value="x">largest pair (messages)</option></select></label></div>'
            '<div class="apm-stage"><span class="apm-corner"></span>'
            '<div class="apm-x"><span class="apm-x0"></span><span>destination PE &rarr;</span>'
            '<span class="apm-x1"></span></div>'
            '<div class="apm-y"><span class="apm-y0"></span><span class="apm-yl">'
            'source PE &darr;</span><span class="apm-y1"></span></div>'
            '<canvas class="apm-canvas" width="1" height="1"></canvas>'
            '<div class="apm-tip" hidden></div></div>'
            '<div class="apm-legend"><span class="apm-lo"></span><span class="apm-ramp"></span>'
            '<span class="apm-hi"></span> <span class="apm-axes"></span></div>'
            '<p class="apm-hover mono"></p><p class="apm-note"></p>'
            f'<p class="muted">Levels: {esc(blocks)}. {esc(cover)} Hover a cell for its '
            "pair and counts; click or scroll into a block to zoom in, the breadcrumb or "
            "scrolling out to go back.</p>"
            f'<script type="application/json" class="apm-data">{data}</script></div>'
        )


#: The explorer's script: one copy per page, whatever the number of matrices.
EXPLORER_JS = r"""<script>(function () {
"use strict";
var TYPES = {u1: Uint8Array, u2: Uint16Array, u4: Uint32Array, f8: Float64Array};
var RAMP = [[68,1,84],[71,44,123],[58,82,139],[44,114,142],[32,144,140],[40,174,127],
  [94,201,97],[173,220,48],[253,231,36]];
var ZERO = [217, 217, 217];
function decode(spec) {
  var bin = atob(spec[1]), n = bin.length, bytes = new Uint8Array(n);
  for (var i = 0; i < n; i++) bytes[i] = bin.charCodeAt(i);
  var T = TYPES[spec[0]];
  return new T(bytes.buffer, 0, n / T.BYTES_PER_ELEMENT);
}
function fmt(v) { return Number(v).toLocaleString("en-US"); }
function span(a, b) { return a === b ? "PE " + a : "PEs " + a + "-" + b; }
function colour(t) {
  var x = Math.max(0, Math.min(1, t)) * (RAMP.length - 1), i = Math.min(RAMP.length - 2,
    Math.floor(x)), f = x - i, a = RAMP[i], b = RAMP[i + 1];
  return [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2])];
}
function Explorer(root) {
  var data = JSON.parse(root.querySelector(".apm-data").textContent);
  var n = data.n, levels = data.levels, self = this;
  var canvas = root.querySelector(".apm-canvas"), ctx = canvas.getContext("2d");
  var tip = root.querySelector(".apm-tip"), hover = root.querySelector(".apm-hover");
  var note = root.querySelector(".apm-note"), back = root.querySelector(".apm-back");
  var crumbs = root.querySelector(".apm-crumbs"), mode = root.querySelector(".apm-mode");
  var stack = [], view = null;
  this.root = root; this.canvas = canvas; this.tip = tip;
  function level(d) {
    var L = levels[d];
    if (!L.arr) {
      L.arr = {};
      for (var k in L.a) L.arr[k] = decode(L.a[k]);
      L.side = Math.ceil(n / L.s);
      L.index = new Map();
      for (var t = 0; t < L.tiles; t++) L.index.set(L.arr.tr[t] * L.side + L.arr.tc[t], t);
    }
    return L;
  }
  function child(d, src, dst) {  // the tile of level d + 1 under PE pair (src, dst)
    if (d + 1 >= levels.length || levels[d + 1].tiles === 0) return -1;
    var L = level(d + 1), id = Math.floor(src / L.s) * L.side + Math.floor(dst / L.s);
    var t = L.index.get(id);
    return t === undefined ? -1 : t;
  }
  function open(d, t) {
    var L = level(d), A = L.arr, r0 = A.tr[t] * L.s, c0 = A.tc[t] * L.s;
    var rows = Math.ceil(Math.min(L.s, n - r0) / L.b);
    var cols = Math.ceil(Math.min(L.s, n - c0) / L.b);
    var grid = new Int32Array(rows * cols).fill(-1), first = A.to[t], count = A.tn[t];
    for (var i = first; i < first + count; i++) grid[A.r[i] * cols + A.c[i]] = i;
    return {d: d, t: t, L: L, r0: r0, c0: c0, rows: rows, cols: cols, grid: grid};
  }
  function value(v, i, m) {
    if (m === "x" && v.L.b > 1) return v.L.arr.x[i];
    return v.L.arr[m === "y" ? "y" : "m"][i];
  }
  function draw() {
    var v = view, m = mode.value, vals = [], i, k;
    canvas.width = v.cols; canvas.height = v.rows;
    canvas.style.aspectRatio = v.cols + " / " + v.rows;
    for (k = 0; k < v.grid.length; k++) if (v.grid[k] >= 0) vals.push(value(v, v.grid[k], m));
    vals.sort(function (x, y) { return x - y; });
    var lo = vals.length ? vals[0] : 0, hi = vals.length ? vals[vals.length - 1] : 0;
    var median = vals.length ? vals[vals.length >> 1] : 0;
    // the static heatmap's rule: a log scale when the largest cell is over 50x the median
    var log = median > 0 && hi / median > 50 && hi > lo;
    var a = log ? Math.log(lo) : 0, w = log ? Math.log(hi) - a : (hi || 1);
    var img = ctx.createImageData(v.cols, v.rows), px = img.data;
    for (k = 0; k < v.grid.length; k++) {
      i = v.grid[k];
      var x = i < 0 ? 0 : value(v, i, m);
      var c = i < 0 ? ZERO : colour(log ? (Math.log(x) - a) / w : x / w);
      px[4 * k] = c[0]; px[4 * k + 1] = c[1]; px[4 * k + 2] = c[2]; px[4 * k + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    var srcEnd = Math.min(v.r0 + v.L.s, n) - 1, dstEnd = Math.min(v.c0 + v.L.s, n) - 1;
    root.querySelector(".apm-x0").textContent = v.c0;
    root.querySelector(".apm-x1").textContent = dstEnd;
    root.querySelector(".apm-y0").textContent = v.r0;
    root.querySelector(".apm-y1").textContent = srcEnd;
    root.querySelector(".apm-lo").textContent = hi ? (log ? fmt(lo) : "0") : "no message";
    root.querySelector(".apm-hi").textContent = hi ? fmt(hi) + (log ? " (log scale)" : "") : "";
    root.querySelector(".apm-axes").textContent = "\u00b7 grey: no message \u00b7 " +
      (v.L.b === 1 ? "one cell per PE pair" : "one cell per block of " + fmt(v.L.b) +
      " x " + fmt(v.L.b) + " PEs");
    crumbs.textContent = "";
    stack.forEach(function (s, j) {
      var link = document.createElement(j === stack.length - 1 ? "span" : "a");
      link.textContent = j === 0 ? "all PEs" : span(s.r0, Math.min(s.r0 + s.L.s, n) - 1) +
        " \u2192 " + span(s.c0, Math.min(s.c0 + s.L.s, n) - 1);
      if (j < stack.length - 1) {
        link.href = "#"; link.addEventListener("click", function (e) {
          e.preventDefault(); stack.length = j + 1; view = stack[j]; draw(); });
      }
      if (j) crumbs.appendChild(document.createTextNode(" \u203a "));
      crumbs.appendChild(link);
    });
    back.disabled = stack.length < 2;
  }
  function block(v, r, c) {  // the PE ranges and data of cell (r, c) of view v
    var b = v.L.b, a = v.r0 + r * b, d = v.c0 + c * b;
    return {src: a, src2: Math.min(a + b, v.r0 + v.L.s, n) - 1, dst: d,
      dst2: Math.min(d + b, v.c0 + v.L.s, n) - 1, i: v.grid[r * v.cols + c]};
  }
  function describe(v, r, c) {
    var q = block(v, r, c), A = v.L.arr, head = span(q.src, q.src2) + " \u2192 " +
      span(q.dst, q.dst2) + ": ";
    if (q.i < 0) return head + "no message";
    var text = head + fmt(A.m[q.i]) + " messages, " + fmt(A.y[q.i]) + " bytes";
    if (v.L.b === 1) return text;
    text += " (sum over the block); largest pair " + (q.src + A.xs[q.i]) + " \u2192 " +
      (q.dst + A.xd[q.i]) + ": " + fmt(A.x[q.i]) + " messages";
    return text + (child(v.d, q.src, q.dst) >= 0 ? " \u2014 click to zoom in" :
      " \u2014 no finer view in this page (click: how to get it)");
  }
  function howto(q) {
    var csv = "the rows of logical_pairs.csv (written by actorprof logical " + data.path +
      ") with src_pe in " + q.src + "-" + q.src2 + " and dst_pe in " + q.dst + "-" + q.dst2;
    var lo = Math.min(q.src, q.dst), hi = Math.max(q.src2, q.dst2);
    var win = hi - lo < 1024 ? "; or draw it: actorprof logical " + data.path + " --pes " +
      lo + "-" + hi : "";
    return "This page holds no finer view of " + span(q.src, q.src2) + " \u2192 " +
      span(q.dst, q.dst2) + " (it keeps the busiest blocks within its size budget). " +
      "Single-PE data: " + csv + win + ".";
  }
  function cellAt(e) {
    var rect = canvas.getBoundingClientRect(), v = view;
    var c = Math.floor((e.clientX - rect.left) / rect.width * v.cols);
    var r = Math.floor((e.clientY - rect.top) / rect.height * v.rows);
    return r >= 0 && r < v.rows && c >= 0 && c < v.cols ? [r, c] : null;
  }
  function zoom(rc) {  // true when it zoomed in
    var q = block(view, rc[0], rc[1]);
    if (view.L.b === 1) return false;
    if (q.i < 0) { note.textContent = "No message in this block."; return false; }
    var t = child(view.d, q.src, q.dst);
    if (t < 0) { note.textContent = howto(q); return false; }
    note.textContent = "";
    view = open(view.d + 1, t); stack.push(view); draw();
    return true;
  }
  function out() {
    if (stack.length < 2) return false;
    stack.pop(); view = stack[stack.length - 1]; note.textContent = ""; draw();
    return true;
  }
  canvas.addEventListener("mousemove", function (e) {
    var rc = cellAt(e);
    if (!rc) { tip.hidden = true; return; }
    tip.textContent = describe(view, rc[0], rc[1]); hover.textContent = tip.textContent;
    var rect = canvas.getBoundingClientRect(), x = e.clientX - rect.left;
    tip.hidden = false;
    // right of the pointer, or left of it on the canvas's right side
    var left = x > rect.width * 0.55 ? x - tip.offsetWidth - 14 : x + 14;
    tip.style.left = (canvas.offsetLeft + left) + "px";
    tip.style.top = (e.clientY - rect.top + canvas.offsetTop + 14) + "px";
  });
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  canvas.addEventListener("click", function (e) { var rc = cellAt(e); if (rc) zoom(rc); });
  canvas.addEventListener("wheel", function (e) {
    var rc = cellAt(e);
    if (rc && (e.deltaY < 0 ? zoom(rc) : out())) e.preventDefault();
  }, {passive: false});
  back.addEventListener("click", out);
  mode.addEventListener("change", draw);
  // for the probe: the cell of view holding pair (src, dst), and whether it zooms
  this.cellOf = function (src, dst) {
    var v = view, r = Math.floor((src - v.r0) / v.L.b), c = Math.floor((dst - v.c0) / v.L.b);
    return r >= 0 && r < v.rows && c >= 0 && c < v.cols ? [r, c] : null;
  };
  this.canZoom = function (rc) {
    var q = block(view, rc[0], rc[1]);
    return view.L.b > 1 && q.i >= 0 && child(view.d, q.src, q.dst) >= 0;
  };
  this.fire = function (type, rc) {
    var rect = canvas.getBoundingClientRect();
    canvas.dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true,
      clientX: rect.left + (rc[1] + 0.5) * rect.width / view.cols,
      clientY: rect.top + (rc[0] + 0.5) * rect.height / view.rows}));
  };
  this.view = function () { return view; };
  this.top = function () { while (out()) { /* back to all PEs */ } note.textContent = ""; };
  view = open(0, 0); stack.push(view); draw();
}
var explorers = [];
document.querySelectorAll(".apm").forEach(function (root) {
  explorers.push(new Explorer(root));
});
var ready = performance.now();
// the test hook: #probe=SRC,DST[;SRC,DST...] (#look=...: hover at the top level, no zoom)
var asked = /[#&](probe|look)=([0-9,;]+)/.exec(location.hash);
if (asked && explorers.length) {
  var ex = explorers[0], found = [];
  asked[2].split(";").forEach(function (pair) {
    var p = pair.split(","), src = +p[0], dst = +p[1], hops = 0;
    ex.top();
    var rc = ex.cellOf(src, dst);
    while (asked[1] === "probe" && rc && ex.canZoom(rc) && hops++ < 64) {
      ex.fire("click", rc); rc = ex.cellOf(src, dst);
    }
    var probe = document.createElement("output");
    probe.className = "apm-probe";
    probe.dataset.pair = src + "," + dst;
    if (rc) {
      ex.fire("mousemove", rc); probe.textContent = ex.tip.textContent;
      // probe: no finer view here, and a click says how to get it
      if (asked[1] === "probe" && ex.view().L.b > 1) ex.fire("click", rc);
    } else probe.textContent = "no such pair";
    probe.dataset.block = ex.view().L.b;
    probe.dataset.level = ex.view().d;
    probe.dataset.note = ex.root.querySelector(".apm-note").textContent;
    probe.dataset.ready = ready.toFixed(1);
    probe.dataset.top = (ex.root.getBoundingClientRect().top + window.scrollY).toFixed(0);
    document.body.appendChild(probe);
    found.push(probe);
  });
  window.addEventListener("load", function () {
    var t = performance.now().toFixed(1);
    found.forEach(function (probe) { probe.dataset.load = t; });
  });
}
})();</script>"""
