/* repomapper graph explorer: draws the layout computed by repomapper on a canvas, no library.
   Every name from the repository reaches the DOM through textContent, or the canvas as text. */
(function () {
  'use strict';
  const DATA = JSON.parse(document.getElementById('repomapper-data').textContent);
  const META = DATA.meta;
  const FILES = DATA.files;
  const N = FILES.length;
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#17becf', '#bcbd22', '#8c6d31'];
  const OTHER = '#b5b5b5';
  const FONT_PX = 12;
  const FONT = FONT_PX + 'px system-ui, -apple-system, "Segoe UI", sans-serif';
  const LABEL_H = FONT_PX + 4;
  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  const dirOf = (p) => { const i = p.lastIndexOf('/'); return i < 0 ? '' : p.slice(0, i); };
  const baseName = (p) => { const i = p.lastIndexOf('/'); return i < 0 ? p : p.slice(i + 1); };
  const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  // a package's __init__.py or index.js says little alone: it is labelled with its directory
  const fileLabel = (p) => {
    const b = baseName(p);
    const d = baseName(dirOf(p));
    return d && /^(__init__\.py|__main__\.py|index\.[a-z]+|mod\.rs|lib\.rs)$/.test(b) ? d + '/' + b : b;
  };

  // -- the directory tree and the layout (computed by repomapper: x, y, radius) ------------
  const dirs = new Map();
  function dirNode(path) {
    let d = dirs.get(path);
    if (!d) {
      const at = DATA.dirs[path] || [0, 0, 0];
      d = { path: path, subdirs: [], files: [], rank: 0, count: 0, x: at[0], y: at[1], r: at[2],
        depth: path ? path.split('/').length : 0 };
      dirs.set(path, d);
      if (path) dirNode(dirOf(path)).subdirs.push(d);
    }
    return d;
  }
  FILES.forEach(function (f, i) {
    f.i = i;
    f.dir = dirOf(f.p);
    f.x = f.xy[0]; f.y = f.xy[1]; f.rad = f.xy[2];
    dirNode(f.dir).files.push(f);
    for (let d = f.dir; ; d = dirOf(d)) {
      const node = dirNode(d);
      node.rank += f.r;
      node.count += 1;
      if (!d) break;
    }
  });
  const rankOrder = FILES.slice().sort((a, b) => b.r - a.r || byName(a.p, b.p));
  rankOrder.forEach((f, k) => { f.pos = k + 1; });
  // the directories every file shares (django/ in django) say nothing: colours start below them
  let common = '';
  for (let d = dirs.get(''); d.files.length === 0 && d.subdirs.length === 1;) { d = d.subdirs[0]; common = d.path; }
  const groupOf = function (p) {
    const rest = common ? p.slice(common.length + 1) : p;
    const i = rest.indexOf('/');
    return i < 0 ? '(files in ' + (common || 'the root') + ')' : (common ? common + '/' : '') + rest.slice(0, i);
  };

  // -- adjacency ---------------------------------------------------------------------------
  const out = FILES.map(() => []);
  const inc = FILES.map(() => []);
  DATA.edges.forEach(function (e) {
    const edge = { s: e[0], t: e[1], refs: e[2], idents: e[3], imports: e[4], top: e[5] };
    out[e[0]].push(edge);
    inc[e[1]].push(edge);
  });

  // -- colours -----------------------------------------------------------------------------
  function palette(key) {
    const counts = new Map();
    FILES.forEach((f) => counts.set(key(f), (counts.get(key(f)) || 0) + 1));
    const names = Array.from(counts.keys()).sort((a, b) => counts.get(b) - counts.get(a) || byName(a, b));
    const colours = new Map();
    names.forEach((n, k) => colours.set(n, k < PALETTE.length ? PALETTE[k] : OTHER));
    return { key: key, colours: colours, names: names, counts: counts };
  }
  const schemes = { dir: palette((f) => groupOf(f.p)), lang: palette((f) => f.l || '(unknown)') };
  let scheme = schemes.dir;
  function colourOfFile(f) { return scheme.colours.get(scheme.key(f)) || OTHER; }
  function colourOfDir(d) {
    const counts = new Map();
    let best = null;
    (function walk(x) {
      x.files.forEach(function (f) {
        const k = scheme.key(f);
        counts.set(k, (counts.get(k) || 0) + 1);
        if (best === null || counts.get(k) > counts.get(best) || (counts.get(k) === counts.get(best) && k < best)) best = k;
      });
      x.subdirs.forEach(walk);
    })(d);
    return scheme.colours.get(best) || OTHER;
  }

  // -- budgets -----------------------------------------------------------------------------
  let budget = META.budgets.length ? 0 : -1;
  const inMap = (f) => budget >= 0 && f.m.indexOf(budget) >= 0;
  function dirInMap(d) {
    let n = 0;
    (function walk(x) { x.files.forEach((f) => { if (inMap(f)) n++; }); x.subdirs.forEach(walk); })(d);
    return n;
  }

  // -- what is visible ---------------------------------------------------------------------
  const collapsed = new Set(DATA.collapsed);
  function hiddenBy(path) {  // the outermost collapsed directory above path, or null
    const parts = path.split('/');
    let acc = '';
    for (let k = 0; k < parts.length - 1; k++) {
      acc = k ? acc + '/' + parts[k] : parts[k];
      if (collapsed.has(acc)) return acc;
    }
    return null;
  }
  let nodes = [];        // what is drawn as a disc: files and collapsed directories
  let rings = [];        // open directories, drawn as circles behind
  let drawnEdges = [];
  let byId = new Map();
  let labelOrder = [];
  const MAX_EDGES = META.max_edges_drawn || 5000;
  function build() {
    const rep = FILES.map(function (f) { const h = hiddenBy(f.p); return h === null ? 'f:' + f.i : 'd:' + h; });
    nodes = [];
    byId = new Map();
    let nFiles = 0;
    FILES.forEach(function (f, i) {
      const id = rep[i];
      if (byId.has(id)) return;
      let n;
      if (id.charCodeAt(0) === 102) {
        n = { id: id, file: f, x: f.x, y: f.y, r: f.rad, rank: f.r, label: fileLabel(f.p), colour: colourOfFile(f), ring: inMap(f) };
        nFiles++;
      } else {
        const d = dirs.get(id.slice(2));
        n = { id: id, dir: d, x: d.x, y: d.y, r: d.r, rank: d.rank, label: baseName(d.path) + '/ (' + d.count + ')',
          colour: colourOfDir(d), ring: dirInMap(d) > 0 };
      }
      nodes.push(n);
      byId.set(id, n);
    });
    rings = [];
    dirs.forEach(function (d) {
      if (!d.path || collapsed.has(d.path) || hiddenBy(d.path + '/x') !== null || d.path === common) return;
      rings.push({ id: 'r:' + d.path, dir: d, x: d.x, y: d.y, r: d.r, rank: d.rank, label: baseName(d.path) + '/' });
    });
    rings.sort((a, b) => a.dir.depth - b.dir.depth || byName(a.dir.path, b.dir.path));
    const agg = new Map();
    DATA.edges.forEach(function (e) {
      const a = rep[e[0]], b = rep[e[1]];
      if (a === b) return;
      const key = a + '\u0000' + b;
      let x = agg.get(key);
      if (!x) { x = { from: a, to: b, refs: 0, imports: 0 }; agg.set(key, x); }
      x.refs += e[2];
      x.imports += e[4];
    });
    // the strongest edges only: past a few thousand they are a blur
    const all = Array.from(agg.values());
    all.sort((a, b) => (b.refs + 3 * b.imports) - (a.refs + 3 * a.imports) || byName(a.from, b.from) || byName(a.to, b.to));
    drawnEdges = all.slice(0, MAX_EDGES).map((x) => ({ a: byId.get(x.from), b: byId.get(x.to), imports: x.imports }));
    const hidden = all.length - drawnEdges.length;
    // labels are offered in rank order: a label shows unless a better-ranked one took its place
    labelOrder = nodes.concat(rings).sort((a, b) => b.rank - a.rank || byName(a.id, b.id));
    $('status').textContent = nodes.length + ' nodes (' + nFiles + ' files, ' + (nodes.length - nFiles) +
      ' collapsed directories), ' + drawnEdges.length + ' edges' + (hidden ? ' (the strongest; ' + hidden + ' more hidden)' : '') +
      '; ' + N + ' files mapped';
    document.body.dataset.nodes = String(nodes.length);
    if (selected && !byId.has(selected) && !selected.startsWith('r:')) selected = null;
    redraw();
  }

  // -- the view: screen = world * scale + offset, in CSS pixels of the canvas ------------------
  const canvas = $('canvas');
  const ctx = canvas.getContext('2d');
  const view = { scale: 1, tx: 0, ty: 0, w: 0, h: 0 };
  let selected = null;
  let hovered = null;
  let placed = [];
  const widths = new Map();
  function textWidth(s) {
    let w = widths.get(s);
    if (w === undefined) { w = ctx.measureText(s).width; widths.set(s, w); }
    return w;
  }
  function resize() {
    const box = $('graph').getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    const cx = (view.w / 2 - view.tx) / view.scale, cy = (view.h / 2 - view.ty) / view.scale;
    const first = view.w === 0;
    view.w = Math.max(1, Math.floor(box.width));
    view.h = Math.max(1, Math.floor(box.height));
    canvas.width = Math.round(view.w * ratio);
    canvas.height = Math.round(view.h * ratio);
    canvas.style.width = view.w + 'px';
    canvas.style.height = view.h + 'px';
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.font = FONT;
    if (first) fit(); else { view.tx = view.w / 2 - cx * view.scale; view.ty = view.h / 2 - cy * view.scale; }
    redraw();
  }
  function fit() {
    const root = dirs.get('');
    const margin = 16;
    view.scale = Math.min((view.w - 2 * margin) / (2 * root.r), (view.h - 2 * margin) / (2 * root.r));
    view.tx = view.w / 2 - root.x * view.scale;
    view.ty = view.h / 2 - root.y * view.scale;
    redraw();
  }
  const sx = (x) => x * view.scale + view.tx;
  const sy = (y) => y * view.scale + view.ty;
  const sr = (r) => Math.max(1.5, r * view.scale);
  function zoomAt(px, py, factor) {
    const s = Math.min(400, Math.max(0.02, view.scale * factor));
    view.tx = px - (px - view.tx) * (s / view.scale);
    view.ty = py - (py - view.ty) * (s / view.scale);
    view.scale = s;
    redraw();
  }

  // -- drawing -----------------------------------------------------------------------------
  let pending = false;
  function redraw() {
    if (pending || view.w === 0) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  }
  function onScreen(x, y, r) { return x + r >= 0 && y + r >= 0 && x - r <= view.w && y - r <= view.h; }
  function arrow(a, b, colour) {
    const x1 = sx(a.x), y1 = sy(a.y), x2 = sx(b.x), y2 = sy(b.y);
    const d = Math.hypot(x2 - x1, y2 - y1);
    if (d < 1) return;
    const ux = (x2 - x1) / d, uy = (y2 - y1) / d;
    const ex = x2 - ux * sr(b.r), ey = y2 - uy * sr(b.r);
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(ex, ey); ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(ex, ey);
    ctx.lineTo(ex - ux * 7 - uy * 3.5, ey - uy * 7 + ux * 3.5);
    ctx.lineTo(ex - ux * 7 + uy * 3.5, ey - uy * 7 - ux * 3.5);
    ctx.closePath(); ctx.fill();
  }
  function draw() {
    ctx.clearRect(0, 0, view.w, view.h);
    ctx.lineWidth = 1;
    rings.forEach(function (g) {
      const x = sx(g.x), y = sy(g.y), r = sr(g.r);
      if (!onScreen(x, y, r) || r < 3) return;
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fillStyle = 'rgba(60, 64, 67, 0.035)';
      ctx.fill();
      ctx.strokeStyle = g.id === selected ? '#d93025' : 'rgba(60, 64, 67, 0.25)';
      ctx.stroke();
    });
    // edges: one faint path for imports, one dashed for references only
    const focus = selected && selected.charCodeAt(0) !== 114 ? selected : null;
    // the more edges, the fainter each: thousands at full strength hide the files under them
    const fade = Math.min(0.3, 0.3 * Math.sqrt(300 / Math.max(1, drawnEdges.length)));
    [true, false].forEach(function (solid) {
      ctx.beginPath();
      drawnEdges.forEach(function (e) {
        if ((e.imports > 0) !== solid) return;
        ctx.moveTo(sx(e.a.x), sy(e.a.y));
        ctx.lineTo(sx(e.b.x), sy(e.b.y));
      });
      ctx.setLineDash(solid ? [] : [3, 3]);
      ctx.strokeStyle = 'rgba(120, 124, 130, ' + (focus ? fade / 2 : fade).toFixed(3) + ')';
      ctx.stroke();
    });
    ctx.setLineDash([]);
    if (focus) {
      ctx.lineWidth = 1.5;
      drawnEdges.forEach(function (e) {
        if (e.a.id === focus) arrow(e.a, e.b, 'rgba(217, 48, 37, 0.8)');
        else if (e.b.id === focus) arrow(e.a, e.b, 'rgba(26, 115, 232, 0.8)');
      });
      ctx.lineWidth = 1;
    }
    nodes.forEach(function (n) {
      const x = sx(n.x), y = sy(n.y), r = sr(n.r);
      if (!onScreen(x, y, r)) return;
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.globalAlpha = n.dir ? 0.45 : 1;
      ctx.fillStyle = n.colour;
      ctx.fill();
      ctx.globalAlpha = 1;
      if (n.dir) { ctx.strokeStyle = n.colour; ctx.lineWidth = 1.5; ctx.stroke(); }
      if (n.ring) { ctx.strokeStyle = '#111'; ctx.lineWidth = Math.max(1.5, Math.min(3, r / 3)); ctx.stroke(); }
      if (n.id === selected || n.id === hovered) {
        ctx.beginPath();
        ctx.arc(x, y, r + 3, 0, 2 * Math.PI);
        ctx.strokeStyle = n.id === selected ? '#d93025' : '#5f6368';
        ctx.lineWidth = 2;
        ctx.stroke();
      }
      ctx.lineWidth = 1;
    });
    drawLabels();
    document.body.dataset.ready = '1';
  }

  // -- labels: greedy by rank, none over another, none cut by the edge of the drawing ---------
  // where a node's label may go, best first
  function labelSpots(n) {
    const w = textWidth(n.label) + 4, h = LABEL_H;
    const x = sx(n.x), y = sy(n.y), r = sr(n.r);
    if (n.id.charCodeAt(0) === 114) {  // an open directory: its name inside the top of its circle
      return r < 45 ? [] : [{ x: x - w / 2, y: y - r + 2, w: w, h: h }];
    }
    const spots = [];
    if (r >= 9 && 2 * r >= w + 2) spots.push({ x: x - w / 2, y: y - h / 2, w: w, h: h, inside: true });
    spots.push({ x: x + r + 2, y: y - h / 2, w: w, h: h }, { x: x - r - 2 - w, y: y - h / 2, w: w, h: h },
      { x: x - w / 2, y: y + r + 1, w: w, h: h }, { x: x - w / 2, y: y - r - 1 - h, w: w, h: h });
    return spots;
  }
  function drawLabels() {
    const CELL = 64;
    placed = [];
    const fits = (b) => b.x >= 0 && b.y >= 0 && b.x + b.w <= view.w && b.y + b.h <= view.h;
    const meets = (b, o) => b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h;
    function cells(b, fn) {
      for (let gx = Math.floor(b.x / CELL); gx <= Math.floor((b.x + b.w) / CELL); gx++) {
        for (let gy = Math.floor(b.y / CELL); gy <= Math.floor((b.y + b.h) / CELL); gy++) {
          if (fn(gx + ',' + gy) === false) return false;
        }
      }
      return true;
    }
    function put(grid, b) { cells(b, (k) => { if (!grid.has(k)) grid.set(k, []); grid.get(k).push(b); }); }
    const labels = new Map();
    const free = (b) => cells(b, (k) => !(labels.get(k) || []).some((o) => meets(b, o)));
    // discs a label should rather not cover (a label may still sit on one when nothing else fits)
    const discs = new Map();
    nodes.forEach(function (n) {
      const x = sx(n.x), y = sy(n.y), r = sr(n.r);
      if (r >= 3 && onScreen(x, y, r)) put(discs, { x: x - r, y: y - r, w: 2 * r, h: 2 * r, id: n.id });
    });
    const clearOfDiscs = (b, id) => cells(b, (k) => !(discs.get(k) || []).some((o) => o.id !== id && meets(b, o)));
    function take(n, b) {
      b.id = n.id;
      b.text = n.label;
      placed.push(b);
      put(labels, b);
    }
    // the hovered and the selected node's labels first: they are what the reader asked for
    const first = [hovered, selected].map((id) => id && (byId.get(id) || rings.find((g) => g.id === id))).filter(Boolean);
    const done = new Set();
    first.concat(labelOrder).forEach(function (n) {
      if (done.has(n.id)) return;
      done.add(n.id);
      const spots = labelSpots(n).filter((b) => fits(b) && free(b));
      const b = spots.find((b) => b.inside || n.id.charCodeAt(0) === 114 || clearOfDiscs(b, n.id)) || spots[0];
      if (b) take(n, b);
    });
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    placed.forEach(function (b) {
      const strong = b.id === selected || b.id === hovered;
      ctx.lineWidth = 3;
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.9)';
      ctx.strokeText(b.text, b.x + 2, b.y + b.h / 2);
      ctx.fillStyle = strong ? '#d93025' : b.id.charCodeAt(0) === 102 ? '#202124' : '#5f6368';
      ctx.fillText(b.text, b.x + 2, b.y + b.h / 2);
    });
    ctx.lineWidth = 1;
  }

  // -- pointing ----------------------------------------------------------------------------
  function hit(px, py) {
    let best = null, bestD = Infinity;
    nodes.forEach(function (n) {
      const d = Math.hypot(sx(n.x) - px, sy(n.y) - py);
      const reach = Math.max(sr(n.r), 5);
      if (d <= reach && d / reach < bestD) { best = n; bestD = d / reach; }
    });
    if (best) return best.id;
    let ring = null;
    rings.forEach(function (g) { if (Math.hypot(sx(g.x) - px, sy(g.y) - py) <= sr(g.r)) ring = g; });
    return ring ? ring.id : null;
  }
  function local(ev) { const b = canvas.getBoundingClientRect(); return [ev.clientX - b.left, ev.clientY - b.top]; }
  let drag = null;
  canvas.addEventListener('pointerdown', function (ev) {
    const p = local(ev);
    drag = { x: p[0], y: p[1], tx: view.tx, ty: view.ty, moved: false };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener('pointermove', function (ev) {
    const p = local(ev);
    if (drag) {
      if (Math.abs(p[0] - drag.x) + Math.abs(p[1] - drag.y) > 3) drag.moved = true;
      if (drag.moved) {
        canvas.classList.add('dragging');
        view.tx = drag.tx + p[0] - drag.x;
        view.ty = drag.ty + p[1] - drag.y;
        redraw();
      }
      return;
    }
    const h = hit(p[0], p[1]);
    if (h !== hovered) {
      hovered = h && h.charCodeAt(0) !== 114 ? h : null;
      canvas.classList.toggle('over', hovered !== null);
      redraw();
    }
  });
  canvas.addEventListener('pointerup', function (ev) {
    const p = local(ev);
    canvas.classList.remove('dragging');
    if (drag && !drag.moved) {
      const h = hit(p[0], p[1]);
      if (h) select(h);
    }
    drag = null;
  });
  canvas.addEventListener('pointerleave', function () { if (hovered) { hovered = null; redraw(); } });
  canvas.addEventListener('dblclick', function (ev) {
    const p = local(ev);
    const h = hit(p[0], p[1]);
    if (h && h.charCodeAt(0) === 100) expand(h.slice(2));
    else if (!h) fit();
  });
  canvas.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    const p = local(ev);
    zoomAt(p[0], p[1], Math.exp(-ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015)));
  }, { passive: false });
  $('zoom-in').addEventListener('click', () => zoomAt(view.w / 2, view.h / 2, 1.5));
  $('zoom-out').addEventListener('click', () => zoomAt(view.w / 2, view.h / 2, 1 / 1.5));
  $('zoom-fit').addEventListener('click', fit);
  // the canvas follows its column, whatever changes its size (the window, the header wrapping)
  if (window.ResizeObserver) new ResizeObserver(resize).observe($('graph'));
  else window.addEventListener('resize', resize);

  // -- the side panel ----------------------------------------------------------------------
  const details = $('details');
  const results = $('results');
  function link(f, extra) {
    const li = el('li');
    const a = el('span', f.p, 'link');
    a.addEventListener('click', () => reveal(f.i));
    li.appendChild(a);
    if (extra) li.appendChild(el('span', ' ' + extra, 'idents'));
    return li;
  }
  function section(title, items, empty) {
    details.appendChild(el('h3', title));
    if (!items.length) { details.appendChild(el('p', empty || 'none', 'hint')); return; }
    const ul = el('ul');
    items.forEach((x) => ul.appendChild(x));
    details.appendChild(ul);
  }
  function button(text, fn) {
    const b = el('button', text);
    b.type = 'button';
    b.addEventListener('click', fn);
    return b;
  }
  function showFile(f) {
    clear(details);
    details.dataset.path = f.p;
    details.appendChild(el('h2', f.p));
    const badges = el('p');
    badges.appendChild(el('span', 'rank #' + f.pos + ' of ' + N, 'badge'));
    META.budgets.forEach(function (b, k) {
      if (f.m.indexOf(k) >= 0) badges.appendChild(el('span', 'in the ' + b + '-token map', 'badge in'));
    });
    if (f.c) badges.appendChild(el('span', 'chat file', 'badge'));
    details.appendChild(badges);
    const kv = el('table', null, 'kv');
    [['score', f.r.toPrecision(4)], ['language', f.l || '-'], ['backend', f.b || '-'], ['definitions', f.n]].forEach(function (row) {
      const tr = el('tr');
      tr.appendChild(el('td', row[0]));
      tr.appendChild(el('td', row[1]));
      kv.appendChild(tr);
    });
    details.appendChild(kv);
    details.appendChild(el('h3', 'Why it ranks here'));
    if (f.w.length) {
      const ul = el('ul');
      ul.className = 'why';
      f.w.forEach(function (w) {
        const li = el('li');
        li.appendChild(el('strong', w.signal));
        li.appendChild(el('span', ' ' + w.detail + ' '));
        li.appendChild(el('span', '(' + Number(w.weight).toPrecision(3) + ')', 'idents'));
        ul.appendChild(li);
      });
      details.appendChild(ul);
    } else {
      const importers = inc[f.i].filter((e) => e.imports > 0).length;
      const referrers = inc[f.i].filter((e) => e.refs > 0).length;
      details.appendChild(el('p', 'PageRank over the reference and import graph' +
        (META.task ? ', personalized by the task' : '') + (f.c ? ' (a chat file)' : '') + ': imported by ' + importers +
        ' file(s) and referenced by ' + referrers + ' (listed below), each passing on part of its own rank. ' +
        'This ranking gives no per-signal evidence.', 'hint'));
    }
    section('Definitions (' + f.n + ')', f.d.map(function (d) {
      const li = el('li');
      li.appendChild(el('span', d[0], 'kind'));
      li.appendChild(el('span', (d[3] ? d[3] + '.' : '') + d[1]));
      li.appendChild(el('span', ' :' + d[2], 'idents'));
      return li;
    }).concat(f.n > f.d.length ? [el('li', '... and ' + (f.n - f.d.length) + ' more', 'hint')] : []));
    const byRank = (a, b) => FILES[b].r - FILES[a].r || byName(FILES[a].p, FILES[b].p);
    section('Imports', out[f.i].filter((e) => e.imports > 0).map((e) => e.t).sort(byRank).map((t) => link(FILES[t])));
    section('Imported by', inc[f.i].filter((e) => e.imports > 0).map((e) => e.s).sort(byRank).map((s) => link(FILES[s])));
    section('References into', out[f.i].filter((e) => e.refs > 0).map((e) => link(FILES[e.t], e.refs + ' refs: ' + e.top)));
    section('Referenced by', inc[f.i].filter((e) => e.refs > 0).sort((a, b) => byRank(a.s, b.s))
      .map((e) => link(FILES[e.s], e.refs + ' refs: ' + e.top)));
    if (f.dir) details.appendChild(button('Collapse ' + f.dir + '/', () => collapse(f.dir)));
  }
  function showDir(d) {
    clear(details);
    details.dataset.path = d.path + '/';
    details.appendChild(el('h2', d.path + '/'));
    details.appendChild(el('p', d.count + ' files, total score ' + d.rank.toPrecision(4) +
      (budget >= 0 ? ', ' + dirInMap(d) + ' in the ' + META.budgets[budget] + '-token map' : '')));
    if (collapsed.has(d.path)) details.appendChild(button('Expand', () => expand(d.path)));
    else details.appendChild(button('Collapse', () => collapse(d.path)));
    const top = [];
    (function walk(x) { x.files.forEach((f) => top.push(f)); x.subdirs.forEach(walk); })(d);
    top.sort((a, b) => b.r - a.r || byName(a.p, b.p));
    section('Top files', top.slice(0, 15).map((f) => link(f, '#' + f.pos)));
  }
  function select(id) {
    selected = id;
    if (id.charCodeAt(0) === 102) showFile(FILES[Number(id.slice(2))]);
    else showDir(dirs.get(id.slice(2)));
    redraw();
  }

  // -- expanding and collapsing ------------------------------------------------------------
  function expand(path) {
    collapsed.delete(path);
    dirs.get(path).subdirs.forEach((s) => collapsed.add(s.path));
    build();
    select('r:' + path);
  }
  function collapse(path) {
    Array.from(collapsed).forEach((c) => { if (c.startsWith(path + '/')) collapsed.delete(c); });
    collapsed.add(path);
    build();
    select('d:' + path);
  }
  function centreOn(n, minRadius) {
    // zoom in until the node is at least minRadius pixels across, never out; then centre it
    view.scale = Math.min(400, Math.max(view.scale, minRadius / Math.max(n.r, 0.1)));
    view.tx = view.w / 2 - n.x * view.scale;
    view.ty = view.h / 2 - n.y * view.scale;
  }
  function reveal(i) {
    const f = FILES[i];
    let changed = false;
    for (let h = hiddenBy(f.p); h !== null; h = hiddenBy(f.p)) {
      collapsed.delete(h);
      dirs.get(h).subdirs.forEach((s) => collapsed.add(s.path));
      changed = true;
    }
    if (changed) build();
    results.hidden = true;
    centreOn(byId.get('f:' + i), 10);
    select('f:' + i);
  }

  // -- search ------------------------------------------------------------------------------
  let hits = [];
  function search(q) {
    q = q.trim().toLowerCase();
    clear(results);
    hits = [];
    if (!q) { results.hidden = true; return hits; }
    const files = rankOrder.filter((f) => f.p.toLowerCase().indexOf(q) >= 0).slice(0, 40);
    const more = [];
    if (files.length < 40) {
      rankOrder.forEach(function (f) {
        if (files.length + more.length >= 40 || files.indexOf(f) >= 0) return;
        const d = f.d.find((x) => x[1].toLowerCase().indexOf(q) >= 0);
        if (d) more.push([f, d]);
      });
    }
    files.forEach((f) => results.appendChild(link(f)));
    more.forEach((x) => results.appendChild(link(x[0], x[1][0] + ' ' + x[1][1] + ' :' + x[1][2])));
    if (!files.length && !more.length) results.appendChild(el('li', 'no file or definition matches', 'hint'));
    else results.firstChild.classList.add('active');
    results.hidden = false;
    hits = files.concat(more.map((x) => x[0]));
    return hits.map((f) => f.p);
  }
  $('search').addEventListener('input', function () { search(this.value); });
  $('search').addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter' && hits.length) { ev.preventDefault(); reveal(hits[0].i); }
    if (ev.key === 'Escape') { results.hidden = true; }
  });

  // -- controls, legend, notices -----------------------------------------------------------
  $('title').textContent = META.root + (META.task ? ' \u2014 task: ' + (META.task.length > 80 ? META.task.slice(0, 79) + '\u2026' : META.task) : '');
  const budgetSelect = $('budget');
  META.budgets.forEach(function (b, k) {
    const o = el('option', b + ' tokens (' + FILES.filter((f) => f.m.indexOf(k) >= 0).length + ' files)');
    o.value = String(k);
    budgetSelect.appendChild(o);
  });
  const none = el('option', 'none');
  none.value = '-1';
  budgetSelect.appendChild(none);
  budgetSelect.addEventListener('change', function () { budget = Number(this.value); build(); });
  $('colour').addEventListener('change', function () { scheme = schemes[this.value]; build(); legend(); });
  $('expand-all').addEventListener('click', function () { collapsed.clear(); build(); });
  $('collapse-all').addEventListener('click', function () {
    collapsed.clear();
    const top = common ? dirs.get(common) : dirs.get('');
    top.subdirs.forEach((s) => collapsed.add(s.path));
    build();
  });
  function legend() {
    const box = $('legend');
    clear(box);
    box.appendChild(el('h3', scheme === schemes.dir ? 'Directories' : 'Languages'));
    const ul = el('ul');
    scheme.names.slice(0, PALETTE.length).forEach(function (n) {
      const li = el('li');
      const sw = el('span', null, 'swatch');
      sw.style.background = scheme.colours.get(n);
      li.appendChild(sw);
      li.appendChild(el('span', n + ' (' + scheme.counts.get(n) + ')'));
      ul.appendChild(li);
    });
    if (scheme.names.length > PALETTE.length) ul.appendChild(el('li', (scheme.names.length - PALETTE.length) + ' more, in grey', 'hint'));
    box.appendChild(ul);
    box.appendChild(el('p', 'Discs are files, circles directories (filled when collapsed). Edges run from the file that ' +
      'uses to the file that defines: solid ones carry imports, dashed ones name references only; a selected file\u2019s ' +
      'are drawn in red (out) and blue (in). The page keeps every import edge and each file\u2019s ' + META.ref_edges_per_file +
      ' strongest reference edges (' + META.edges_kept + ' of ' + META.edges_total + '); --format graphml, json or dot export them all.', 'hint'));
    META.diagnostics.forEach((d) => box.appendChild(el('p', d, 'hint')));
  }
  legend();
  if (META.note) { $('notice').textContent = META.note; $('notice').hidden = false; }

  // -- start -------------------------------------------------------------------------------
  function inPage(b) {
    const c = canvas.getBoundingClientRect();
    return { x: b.x + c.left, y: b.y + c.top, w: b.w, h: b.h };
  }
  window.repomapperGraph = {
    reveal: reveal, expand: expand, collapse: collapse, search: search, fit: fit,
    view: () => ({ scale: view.scale, tx: view.tx, ty: view.ty }),
    visibleNodeIds: () => nodes.map((n) => n.id),
    edgesDrawn: () => drawnEdges.length,
    selected: () => selected,
    // what the reader sees, in page pixels: every label drawn, every disc's centre and radius
    labelBoxes: () => placed.map((b) => Object.assign(inPage(b), { id: b.id, text: b.text })),
    nodeDiscs: () => nodes.map((n) => Object.assign(inPage({ x: sx(n.x), y: sy(n.y), w: 0, h: 0 }), { id: n.id, r: sr(n.r) })),
    canvasRect: () => { const c = canvas.getBoundingClientRect(); return { x: c.left, y: c.top, w: c.width, h: c.height }; },
  };
  build();
  resize();
})();
