/* repomapper graph explorer. Every name from the repository reaches the DOM through textContent. */
(function () {
  'use strict';
  const DATA = JSON.parse(document.getElementById('repomapper-data').textContent);
  const META = DATA.meta;
  const FILES = DATA.files;
  const N = FILES.length;
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#17becf', '#bcbd22', '#8c6d31'];
  const OTHER = '#b5b5b5';
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
  const topOf = (p) => { const i = p.indexOf('/'); return i < 0 ? '(root files)' : p.slice(0, i); };

  // -- the directory tree ------------------------------------------------------------------
  const dirs = new Map();
  function dirNode(path) {
    let d = dirs.get(path);
    if (!d) {
      d = { path: path, subdirs: [], files: [], rank: 0, count: 0, depth: path ? path.split('/').length : 0 };
      dirs.set(path, d);
      if (path) dirNode(dirOf(path)).subdirs.push(d);
    }
    return d;
  }
  let maxRank = 0;
  FILES.forEach(function (f, i) {
    f.i = i;
    f.dir = dirOf(f.p);
    f.depth = f.p.split('/').length;
    maxRank = Math.max(maxRank, f.r);
    dirNode(f.dir).files.push(f);
    for (let d = f.dir; ; d = dirOf(d)) {
      const node = dirNode(d);
      node.rank += f.r;
      node.count += 1;
      if (!d) break;
    }
  });
  const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const rankOrder = FILES.slice().sort((a, b) => b.r - a.r || byName(a.p, b.p));
  rankOrder.forEach((f, k) => { f.pos = k + 1; });

  // -- layout: a radial tree (angle by position among the files, radius by depth) ----------
  let leaf = 0;
  let maxDepth = 1;
  function place(d) {
    d.subdirs.sort((a, b) => byName(a.path, b.path));
    d.files.sort((a, b) => byName(a.p, b.p));
    const first = leaf;
    d.subdirs.forEach(place);
    d.files.forEach(function (f) { f.slot = leaf++; maxDepth = Math.max(maxDepth, f.depth); });
    d.slot = (first + leaf - 1) / 2;
  }
  place(dirNode(''));
  const ring = Math.max(160, (Math.max(N, 12) * 16) / (2 * Math.PI) / maxDepth);
  function xy(slot, depth) {
    const a = (2 * Math.PI * (slot + 0.5)) / Math.max(N, 1);
    return { x: Math.round(Math.cos(a) * ring * depth), y: Math.round(Math.sin(a) * ring * depth) };
  }

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
  const schemes = { dir: palette((f) => topOf(f.p)), lang: palette((f) => f.l || '(unknown)') };
  let scheme = schemes.dir;
  function colourOfFile(f) { return scheme.colours.get(scheme.key(f)) || OTHER; }
  function colourOfDir(d) {
    if (scheme === schemes.dir) return scheme.colours.get(topOf(d.path + '/x')) || OTHER;
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
  function repOf(f) {
    const parts = f.p.split('/');
    let acc = '';
    for (let k = 0; k < parts.length - 1; k++) {
      acc = k ? acc + '/' + parts[k] : parts[k];
      if (collapsed.has(acc)) return 'd:' + acc;
    }
    return 'f:' + f.i;
  }
  // nodes grow with the layout, so they stay visible when the whole graph is in view
  const grow = Math.max(1, (ring * maxDepth) / 1500);
  const size = (r) => grow * (4 + 34 * Math.sqrt(maxRank > 0 ? Math.min(r, maxRank) / maxRank : 0));

  const nodes = new vis.DataSet();
  const edges = new vis.DataSet();
  let rep = [];
  let edgesHidden = 0;
  const MAX_EDGES = META.max_edges_drawn || 5000;
  function fileNode(f) {
    const c = colourOfFile(f);
    const hit = inMap(f);
    return { id: 'f:' + f.i, label: baseName(f.p), x: xy(f.slot, f.depth).x, y: xy(f.slot, f.depth).y,
      size: size(f.r), shape: 'dot', borderWidth: hit ? 4 : 1,
      color: { background: c, border: hit ? '#111111' : c, highlight: { background: c, border: '#d93025' } } };
  }
  function dirVisNode(d) {
    const c = colourOfDir(d);
    const hits = dirInMap(d);
    const p = xy(d.slot, d.depth);
    return { id: 'd:' + d.path, label: baseName(d.path) + '/ (' + d.count + ')', x: p.x, y: p.y,
      size: Math.min(48 * grow, size(d.rank) + 4 * grow), shape: 'diamond', borderWidth: hits ? 4 : 1,
      color: { background: c, border: hits ? '#111111' : c, highlight: { background: c, border: '#d93025' } } };
  }
  function build() {
    rep = FILES.map(repOf);
    const nodeList = [];
    const seen = new Set();
    let nFiles = 0;
    FILES.forEach(function (f, i) {
      const r = rep[i];
      if (seen.has(r)) return;
      seen.add(r);
      if (r.charCodeAt(0) === 102) { nodeList.push(fileNode(f)); nFiles++; } else nodeList.push(dirVisNode(dirs.get(r.slice(2))));
    });
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
    // the strongest edges only: drawing cost grows with edges, and past a few thousand they are a blur
    const all = Array.from(agg.values());
    all.sort((a, b) => (b.refs + 3 * b.imports) - (a.refs + 3 * a.imports) || byName(a.from, b.from) || byName(a.to, b.to));
    const edgeList = all.slice(0, MAX_EDGES).map((x) => ({ id: x.from + '\u0000' + x.to, from: x.from, to: x.to,
      width: 0.5 + Math.min(4, Math.log1p(x.refs + 3 * x.imports) / 2), dashes: x.imports === 0 }));
    edgesHidden = all.length - edgeList.length;
    nodes.clear();
    edges.clear();
    nodes.add(nodeList);
    edges.add(edgeList);
    $('status').textContent = nodeList.length + ' nodes (' + nFiles + ' files, ' + (nodeList.length - nFiles) +
      ' directories), ' + edgeList.length + ' edges' + (edgesHidden ? ' (the strongest; ' + edgesHidden + ' more hidden)' : '') +
      '; ' + N + ' files mapped';
    document.body.dataset.nodes = String(nodeList.length);
  }

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
    details.appendChild(button('Expand', () => expand(d.path)));
    const top = [];
    (function walk(x) { x.files.forEach((f) => top.push(f)); x.subdirs.forEach(walk); })(d);
    top.sort((a, b) => b.r - a.r || byName(a.p, b.p));
    section('Top files', top.slice(0, 15).map((f) => link(f, '#' + f.pos)));
  }
  function select(id) {
    if (id.charCodeAt(0) === 102) showFile(FILES[Number(id.slice(2))]);
    else showDir(dirs.get(id.slice(2)));
  }

  // -- expanding and collapsing ------------------------------------------------------------
  function expand(path) {
    collapsed.delete(path);
    dirs.get(path).subdirs.forEach((s) => collapsed.add(s.path));
    build();
    showDir(dirs.get(path));
  }
  function collapse(path) {
    Array.from(collapsed).forEach((c) => { if (c.startsWith(path + '/')) collapsed.delete(c); });
    collapsed.add(path);
    build();
    network.selectNodes(['d:' + path]);
    showDir(dirs.get(path));
  }
  function reveal(i) {
    const f = FILES[i];
    const parts = f.p.split('/');
    let acc = '';
    let changed = false;
    for (let k = 0; k < parts.length - 1; k++) {
      acc = k ? acc + '/' + parts[k] : parts[k];
      if (collapsed.has(acc)) {
        collapsed.delete(acc);
        dirs.get(acc).subdirs.forEach((s) => collapsed.add(s.path));
        changed = true;
      }
    }
    if (changed) build();
    results.hidden = true;
    const id = 'f:' + i;
    network.selectNodes([id]);
    network.focus(id, { scale: Math.max(network.getScale(), 0.8), animation: false });
    showFile(f);
  }

  // -- search ------------------------------------------------------------------------------
  $('search').addEventListener('input', function () {
    const q = this.value.trim().toLowerCase();
    clear(results);
    if (!q) { results.hidden = true; return; }
    const hits = rankOrder.filter((f) => f.p.toLowerCase().indexOf(q) >= 0).slice(0, 40);
    const more = [];
    if (hits.length < 40) {
      rankOrder.forEach(function (f) {
        if (hits.length + more.length >= 40 || hits.indexOf(f) >= 0) return;
        const d = f.d.find((x) => x[1].toLowerCase().indexOf(q) >= 0);
        if (d) more.push([f, d]);
      });
    }
    hits.forEach((f) => results.appendChild(link(f)));
    more.forEach((x) => results.appendChild(link(x[0], x[1][0] + ' ' + x[1][1] + ' :' + x[1][2])));
    if (!hits.length && !more.length) results.appendChild(el('li', 'no file or definition matches', 'hint'));
    results.hidden = false;
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
    dirs.get('').subdirs.forEach((s) => collapsed.add(s.path));
    build();
  });
  function legend() {
    const box = $('legend');
    clear(box);
    box.appendChild(el('h3', scheme === schemes.dir ? 'Top-level directories' : 'Languages'));
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
    box.appendChild(el('p', 'Circles are files, diamonds collapsed directories. Solid edges carry imports, dashed ones ' +
      'name references only. The page keeps every import edge and each file\u2019s ' + META.ref_edges_per_file +
      ' strongest reference edges (' + META.edges_kept + ' of ' + META.edges_total + '); --format graphml, json or dot export them all.', 'hint'));
    META.diagnostics.forEach((d) => box.appendChild(el('p', d, 'hint')));
  }
  legend();
  if (META.note) { $('notice').textContent = META.note; $('notice').hidden = false; }

  // -- the network -------------------------------------------------------------------------
  build();
  const big = N > 1500;
  const network = new vis.Network($('graph'), { nodes: nodes, edges: edges }, {
    physics: false,
    layout: { improvedLayout: false },
    interaction: { hover: false, hideEdgesOnDrag: big, hideEdgesOnZoom: big, multiselect: false },
    nodes: { font: { size: 14, face: 'system-ui, sans-serif', color: '#222' } },
    edges: { smooth: false, arrows: { to: { enabled: true, scaleFactor: 0.4 } }, selectionWidth: 1.5,
      color: { color: '#9aa0a6', highlight: '#d93025', opacity: 0.35 } },
  });
  network.on('click', function (p) { if (p.nodes.length) select(String(p.nodes[0])); });
  network.on('doubleClick', function (p) {
    if (p.nodes.length && String(p.nodes[0]).charCodeAt(0) === 100) expand(String(p.nodes[0]).slice(2));
  });
  network.once('afterDrawing', function () { document.body.dataset.ready = '1'; });
  window.repomapperGraph = { network: network, nodes: nodes, edges: edges, reveal: reveal, expand: expand, collapse: collapse,
    visibleNodeIds: () => nodes.getIds() };
})();
