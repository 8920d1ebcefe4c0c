"""A picture drawn as SVG in pure Python, so that a model can be shown in a notebook,
a web page or a dashboard with no Graphviz binary installed. The layout is the usual
layered one, kept small:

1. layers: a node sits one layer below its lowest parent (a tree's depth); an arc
   that would close a cycle is turned round for the layout only;
2. an arc that spans several layers passes through a point in each, so that it
   bends round the nodes between;
3. order within a layer: depth-first order, which has no crossings in a tree,
   then (for networks) a few sweeps of the barycentre heuristic;
4. x: each layer in turn, the positions nearest the mean of each node's neighbours
   that keep neighbours apart (least squares under order constraints: pool adjacent
   violators), sweeping down and up so that a parent ends centred over its children.

Text widths are estimated from Helvetica's character widths; the SVG names its
font so that a viewer without Helvetica uses Arial or a sans-serif of the same
widths. Each node is a ``<g class="node">`` and each edge a ``<g class="edge">``
with a ``<title>`` naming it, as Graphviz's own SVG does, so that a page can style
or read them."""

import re

FONT, EDGE_FONT, LINE = 11.0, 10.0, 1.3
PAD_X, PAD_Y = 8.0, 5.0
GAP_X, GAP_Y, MARGIN = 16.0, 48.0, 8.0
LABEL_AT = 0.6  # where along its last stretch an edge's label sits
SWEEPS = 8
LOOP = 20.0  # how far an arc to its own node reaches out

# Helvetica's advance widths (thousandths of an em) of the characters that differ
# most from their class's (upper case 0.70, lower case and digits 0.556)
_WIDTHS = {**dict.fromkeys("il.,:;|!'`", 0.26), **dict.fromkeys("fjtI r/\\", 0.29),
           **dict.fromkeys("()[]{}-\"", 0.34), **dict.fromkeys("cksvxyz", 0.5),
           "m": 0.833, "w": 0.722, "M": 0.833, "W": 0.944, "%": 0.889, "@": 1.015,
           "*": 0.389, **dict.fromkeys("=<>+~^", 0.584)}


def text_width(text, size):
    return size * sum(_WIDTHS.get(ch, 0.70 if ch.isupper() else 0.556) for ch in text)


# characters XML 1.0 cannot carry (or would read back changed: a carriage return)
_UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\ufffe\uffff]")


def _escape(text):
    text = _UNWRITABLE.sub("\ufffd", str(text))
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _f(x):
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _size(label, shape):
    """(width, height) of a node drawn around ``label``."""
    lines = str(label).split("\n")
    w = max(text_width(t, FONT) for t in lines) + 2 * PAD_X
    h = len(lines) * FONT * LINE + 2 * PAD_Y
    if shape == "ellipse":  # the ellipse through the corners of the text's box
        return w * 1.3, h * 1.3
    return w, h


def _acyclic(n, out):
    """(depth-first preorder, the arcs kept as they are, the arcs turned round):
    an arc back to a node still being visited would close a cycle."""
    has_parent = [False] * n
    for u in range(n):
        for v in out[u]:
            has_parent[v] = True
    starts = [u for u in range(n) if not has_parent[u]] + list(range(n))
    state, order, kept, turned = [0] * n, [], [], []
    for s in starts:
        if state[s]:
            continue
        state[s] = 1
        order.append(s)
        stack = [(s, 0)]
        while stack:
            u, k = stack.pop()
            if k == len(out[u]):
                state[u] = 2
                continue
            stack.append((u, k + 1))
            v = out[u][k]
            if v == u:
                continue
            if state[v] == 1:
                turned.append((v, u))
            else:
                kept.append((u, v))
                if not state[v]:
                    state[v] = 1
                    order.append(v)
                    stack.append((v, 0))
    return order, kept, turned


def _layers(n, order, arcs):
    """Each node's layer: one below its lowest parent (longest path from a root)."""
    parents = [[] for _ in range(n)]
    children = [[] for _ in range(n)]
    for u, v in arcs:
        parents[v].append(u)
        children[u].append(v)
    waiting = [len(p) for p in parents]
    ready = [u for u in order if not waiting[u]]
    layer = [0] * n
    while ready:
        u = ready.pop()
        for v in children[u]:
            layer[v] = max(layer[v], layer[u] + 1)
            waiting[v] -= 1
            if not waiting[v]:
                ready.append(v)
    return layer


def _isotonic(y):
    """The non-decreasing sequence nearest ``y`` in least squares."""
    blocks = []  # [mean, count]
    for v in y:
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks[-1]
            blocks[-1] = [(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2]
    return [m for m, c in blocks for _ in range(c)]


def _place(row, want, width):
    """x of the nodes of one layer, in order: nearest ``want`` while each pair of
    neighbours stays apart by half their widths and a gap."""
    offsets = [0.0]
    for a, b in zip(row, row[1:]):
        offsets.append(offsets[-1] + (width[a] + width[b]) / 2 + GAP_X)
    fit = _isotonic([want[u] - c for u, c in zip(row, offsets)])
    return [f + c for f, c in zip(fit, offsets)]


class _Layout:
    """Positions of the nodes of a picture, and of the bends of its edges."""

    def __init__(self, picture):
        ids = [i for i, _, _ in picture.nodes]
        self.index = {i: k for k, i in enumerate(ids)}
        n = len(ids)
        self.size = [_size(label, shape) for _, label, shape in picture.nodes]
        out = [[] for _ in range(n)]
        for a, b, _ in picture.edges:
            out[self.index[a]].append(self.index[b])
        order, kept, turned = _acyclic(n, out)
        layer = _layers(n, order, kept + turned)
        # the footprint of a node: its width, or room for the label above it
        width = [w for w, _ in self.size]
        for a, b, text in picture.edges:
            v = self.index[b]
            widest = max(text_width(t, EDGE_FONT) for t in (text or "").split("\n")) + 4
            if a == b:  # room for the loop and its label, on both sides to stay centred
                width[v] = max(width[v], self.size[v][0] + 2 * (LOOP + widest))
            elif text:
                width[v] = max(width[v], widest / LABEL_AT)
        # each arc a chain of points, one per layer it crosses (dummies past n)
        self.chains, up, down = {}, {}, {}
        rank = {u: k for k, u in enumerate(order)}
        for u, v in kept + turned:
            chain = [u]
            for _ in range(layer[u] + 1, layer[v]):
                width.append(0.0)
                layer.append(layer[chain[-1]] + 1)
                rank[len(width) - 1] = rank[u] + 0.5
                chain.append(len(width) - 1)
            chain.append(v)
            for a, b in zip(chain, chain[1:]):
                down.setdefault(a, []).append(b)
                up.setdefault(b, []).append(a)
            self.chains[(u, v)] = chain
        self.turned = set(turned)
        rows = [[] for _ in range(max(layer, default=-1) + 1)]
        for u in sorted(range(len(width)), key=lambda u: rank[u]):
            rows[layer[u]].append(u)
        if any(len(p) > 1 for p in up.values()):  # not a forest: reduce crossings
            rows = self._ordered(rows, up, down)
        x = {}
        for row in rows:
            x.update(zip(row, _place(row, dict.fromkeys(row, 0.0), width)))
        for _ in range(SWEEPS):  # down, to the parents; then up, to the children
            for ks, near in ((range(1, len(rows)), up), (range(len(rows) - 2, -1, -1), down)):
                for k in ks:
                    want = {u: sum(x[v] for v in near[u]) / len(near[u]) if u in near
                            else x[u] for u in rows[k]}
                    x.update(zip(rows[k], _place(rows[k], want, width)))
        left = min((x[u] - width[u] / 2 for u in x), default=0.0)
        self.x = {u: x[u] - left + MARGIN for u in x}
        self.width = max((self.x[u] + width[u] / 2 for u in x), default=0.0) + MARGIN
        heights = [max((self.size[u][1] for u in row if u < n), default=0.0) for row in rows]
        self.y, top = {}, MARGIN
        for row, h in zip(rows, heights):
            for u in row:
                self.y[u] = top + h / 2
            top += h + GAP_Y
        self.height = top - GAP_Y + MARGIN

    @staticmethod
    def _ordered(rows, up, down):
        """Rows reordered by the barycentre of each node's neighbours, sweeping
        down then up."""
        pos = {u: k for row in rows for k, u in enumerate(row)}
        for _ in range(4):
            for ks, near in ((range(1, len(rows)), up), (range(len(rows) - 2, -1, -1), down)):
                for k in ks:
                    rows[k].sort(key=lambda u: (sum(pos[v] for v in near[u]) / len(near[u])
                                                if u in near else pos[u]))
                    pos.update((u, i) for i, u in enumerate(rows[k]))
        return rows

    def points(self, a, b):
        """The polyline of the edge a -> b, from a's border to b's."""
        u, v = self.index[a], self.index[b]
        turned = (v, u) in self.turned and (u, v) not in self.chains
        chain = self.chains[(v, u)][::-1] if turned else self.chains[(u, v)]
        pts = [(self.x[w], self.y[w]) for w in chain]
        (x0, y0), (x1, y1) = pts[0], pts[1]
        pts[0] = (x0, y0 + (1 if y1 > y0 else -1) * self.size[u][1] / 2)
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        pts[-1] = (x1, y1 - (1 if y1 > y0 else -1) * self.size[v][1] / 2)
        return pts


def _text(lines, x, y, size, extra=""):
    """A block of lines centred on (x, y)."""
    top = y - len(lines) * size * LINE / 2 + size * (LINE - 1) / 2 + 0.8 * size
    spans = "".join(f'<tspan x="{_f(x)}" y="{_f(top + k * size * LINE)}">{_escape(t)}'
                    "</tspan>" for k, t in enumerate(lines))
    return f'<text text-anchor="middle" font-size="{_f(size)}"{extra}>{spans}</text>'


def _edge(layout, a, b, text):
    if a == b:  # an arc to itself: a loop on the node's right, its label beyond
        u = layout.index[a]
        x, y = layout.x[u] + layout.size[u][0] / 2, layout.y[u]
        path = f"M{_f(x)},{_f(y - 4)} c18,-14 18,22 0,8"
        arrow = f"{_f(x)},{_f(y + 4)} {_f(x + 7)},{_f(y + 7)} {_f(x + 5)},{_f(y + 1)}"
        body = f'<path d="{path}" fill="none" stroke="black"/><polygon points="{arrow}"/>'
        if text:
            lines = text.split("\n")
            w = max(text_width(t, EDGE_FONT) for t in lines) + 4
            body += _text(lines, x + LOOP + w / 2, y, EDGE_FONT)
    else:
        pts = layout.points(a, b)
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        d = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1e-9)
        ux, uy = (x1 - x0) / d, (y1 - y0) / d
        bx, by = x1 - 8 * ux, y1 - 8 * uy  # the arrowhead's base
        line = pts[:-1] + [(bx, by)]
        path = "M" + " L".join(f"{_f(px)},{_f(py)}" for px, py in line)
        arrow = " ".join(f"{_f(px)},{_f(py)}" for px, py in
                         ((x1, y1), (bx - 3.5 * uy, by + 3.5 * ux), (bx + 3.5 * uy, by - 3.5 * ux)))
        body = f'<path d="{path}" fill="none" stroke="black"/><polygon points="{arrow}"/>'
        if text:
            lx, ly = x0 + LABEL_AT * (x1 - x0), y0 + LABEL_AT * (y1 - y0)
            lines = text.split("\n")
            w = max(text_width(t, EDGE_FONT) for t in lines) + 4
            h = len(lines) * EDGE_FONT * LINE
            body += (f'<rect x="{_f(lx - w / 2)}" y="{_f(ly - h / 2)}" width="{_f(w)}" '
                     f'height="{_f(h)}" fill="white"/>' + _text(lines, lx, ly, EDGE_FONT))
    return (f'<g class="edge" id="{_escape(a)}-&gt;{_escape(b)}"><title>{_escape(a)}'
            f"-&gt;{_escape(b)}</title>{body}</g>")


def _node(layout, i, label, shape):
    u = layout.index[i]
    x, y = layout.x[u], layout.y[u]
    w, h = layout.size[u]
    if shape == "ellipse":
        outline = f'<ellipse cx="{_f(x)}" cy="{_f(y)}" rx="{_f(w / 2)}" ry="{_f(h / 2)}"'
    else:
        outline = f'<rect x="{_f(x - w / 2)}" y="{_f(y - h / 2)}" width="{_f(w)}" ' \
                  f'height="{_f(h)}"'
    return (f'<g class="node" id="{_escape(i)}"><title>{_escape(i)}</title>{outline} '
            f'fill="white" stroke="black"/>{_text(str(label).split(chr(10)), x, y, FONT)}</g>')


def svg(picture):
    """The picture as an SVG document: edges under nodes, each labelled."""
    layout = _Layout(picture)
    w, h = _f(layout.width), _f(layout.height)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" font-family="Helvetica,Arial,sans-serif">',
             f"<title>{_escape(picture.name)}</title>",
             f'<rect width="{w}" height="{h}" fill="white"/>']
    parts += [_edge(layout, a, b, text) for a, b, text in picture.edges]
    parts += [_node(layout, i, label, shape) for i, label, shape in picture.nodes]
    return "\n".join(parts + ["</svg>"]) + "\n"
