// The step-through page of one scenario run (story_page.h): draws the timeline
// from the run's data (#story) and moves one step at a time (Next/Back, arrow
// keys, a click on a step), highlighting the step in the list, its marker and
// its moment on the timeline, and showing the story's state at that step.
// What comes after the current step is hidden until the class gets there (the
// list, the timeline right of the cursor, the verdict): "ahead" shows it.
// Self-contained: no network, no library.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('story').textContent);
  const steps = data.steps;
  const view = data.view;
  // The furniture in the page's language: data.words maps the English below to its Chinese
  // (report/page_words.cpp; empty for --lang en). {0}, {1} are filled in order.
  const WORDS = data.words || {};
  function T(english) {
    let out = WORDS[english] || english;
    for (let i = 1; i < arguments.length; ++i) out = out.split('{' + (i - 1) + '}').join(String(arguments[i]));
    return out;
  }
  const svg = document.getElementById('timeline');
  const NS = 'http://www.w3.org/2000/svg';
  const LEFT = 130, RIGHT = 16, TOP = 22;
  const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
  let current = 0;
  let spacing = 'even';  // every step its own place; 'time': linear in time
  let stepX = [];  // x of each step's marker in the current layout

  const colours = {};
  view.clients.forEach(function (name, i) {
    colours[name] = name === 'observer' ? '#7f7f7f' : PALETTE[i % PALETTE.length];
  });
  function colourOf(who) { return colours[who] || '#9e9e9e'; }

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(NS, name);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function title(node, text) { el('title', {}, node, text); return node; }
  function ms(t) { return (Math.round(t * 10) / 10).toFixed(1) + ' ms'; }

  // The lanes: the narrator's voice, every client, every lock key (owner and lease).
  const lanes = [];
  if (steps.some(function (s) { return s.who === '--'; })) lanes.push({ type: 'narrator', name: '--', label: T('narrator'), h: 30 });
  view.clients.forEach(function (name) { lanes.push({ type: 'client', name: name, label: name, h: 38 }); });
  view.keys.forEach(function (key, i) { lanes.push({ type: 'key', key: key, index: i, label: key.label, h: 56 }); });
  let y = TOP;
  lanes.forEach(function (lane) { lane.y = y; y += lane.h; });
  const HEIGHT = y + 26;
  const END = Math.max(view.end_ms, steps.length ? steps[steps.length - 1].t_ms : 0, 1);
  // The axis starts just before the first step: starting the servers is not the story.
  const START = steps.length ? Math.max(0, steps[0].t_ms - 0.03 * (END - steps[0].t_ms)) : 0;

  // Time to x: linear in time, or every step evenly spaced (times in between interpolated).
  function scale(width) {
    const span = width - LEFT - RIGHT;
    if (spacing === 'time') {
      const at = function (t) { return LEFT + (Math.max(START, Math.min(t, END)) - START) / (END - START) * span; };
      stepX = steps.map(function (s) { return at(s.t_ms); });
      return at;
    }
    const n = steps.length;
    stepX = steps.map(function (s, i) { return LEFT + (i + 0.5) / n * span; });
    return function (t) {
      let lo = -1, hi = n;
      while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (steps[mid].t_ms <= t) lo = mid; else hi = mid; }
      const t0 = lo < 0 ? START : steps[lo].t_ms, x0 = lo < 0 ? LEFT : stepX[lo];
      const t1 = hi >= n ? END : steps[hi].t_ms, x1 = hi >= n ? LEFT + span : stepX[hi];
      return t1 > t0 ? x0 + (Math.min(t, t1) - t0) / (t1 - t0) * (x1 - x0) : x0;
    };
  }

  function drawAxis(x, width) {
    const axis = el('g', { class: 'axis' }, svg);
    el('line', { x1: LEFT, x2: width - RIGHT, y1: TOP - 4, y2: TOP - 4, stroke: '#ccc' }, axis);
    if (spacing !== 'time') return drawGaps(axis);
    const rough = (END - START) / 8, mag = Math.pow(10, Math.floor(Math.log10(rough)));
    const step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= rough; });
    for (let t = Math.ceil(START / step) * step; t <= END + 1e-9; t += step) {
      el('line', { x1: x(t), x2: x(t), y1: TOP - 8, y2: HEIGHT - 20, stroke: '#f0f0f0' }, axis);
      el('text', { x: x(t), y: TOP - 8, 'text-anchor': 'middle' }, axis, (Math.round(t * 10) / 10) + ' ms');
    }
  }

  // Evenly spaced steps hide the time between them: the long gaps are written on the axis.
  function drawGaps(axis) {
    let longest = 0;
    for (let i = 1; i < steps.length; ++i) longest = Math.max(longest, steps[i].t_ms - steps[i - 1].t_ms);
    let free = -Infinity;  // where the last label ended: labels never overlap
    for (let i = 1; i < steps.length; ++i) {
      const gap = steps[i].t_ms - steps[i - 1].t_ms;
      const mid = (stepX[i] + stepX[i - 1]) / 2, text = '+' + ms(gap), half = text.length * 3.2;
      if (gap < 1 || gap < longest / 10 || mid - half < free) continue;
      el('text', { x: mid, y: TOP - 8, 'text-anchor': 'middle' }, axis, text);
      free = mid + half + 4;
    }
  }

  function drawLaneFrame(lane, width) {
    el('line', { x1: 0, x2: width, y1: lane.y + lane.h, y2: lane.y + lane.h, stroke: '#eceff1' }, svg);
    el('text', { x: 8, y: lane.y + 15, class: 'lane-label' }, svg, lane.label);
    const sub = lane.type === 'key' ? T('owner / lease') : lane.name === 'observer' ? T('reads only')
      : lane.type === 'client' ? T('critical section') : '';
    if (sub) el('text', { x: 8, y: lane.y + 28, class: 'lane-sub' }, svg, sub);
  }

  function drawSections(lane, x) {
    view.sections.filter(function (s) { return s.who === lane.name; }).forEach(function (s) {
      const x0 = x(s.from), x1 = Math.max(x(s.to), x0 + 2);
      title(el('rect', { x: x0, y: lane.y + 8, width: x1 - x0, height: lane.h - 16, rx: 3,
                         fill: colourOf(lane.name), 'fill-opacity': 0.35, stroke: colourOf(lane.name) }, svg),
            lane.name + ' in the critical section ' + ms(s.from) + ' to ' + ms(s.to) + (s.open ? ' (still inside at the end)' : ''));
    });
  }

  function drawOverlaps(x) {
    const clientLanes = lanes.filter(function (l) { return l.type === 'client'; });
    if (!clientLanes.length) return;
    const top = clientLanes[0].y, bottom = clientLanes[clientLanes.length - 1].y + clientLanes[clientLanes.length - 1].h;
    view.overlaps.forEach(function (o) {
      const x0 = x(o.from), x1 = Math.max(x(o.to), x0 + 2);
      title(el('rect', { x: x0, y: top, width: x1 - x0, height: bottom - top, fill: '#d62728', 'fill-opacity': 0.18 }, svg),
            T('two holders at once: {0} to {1}', ms(o.from), ms(o.to)));
    });
  }

  // A lease is a wedge that runs down from its full length to nothing at its end.
  function drawLease(lane, lease, x) {
    const top = lane.y + 30, h = 14, x0 = x(lease.from), xt = x(lease.to);
    const label = lease.event + (lease.step ? ' at step ' + lease.step : '');
    if (lease.until === null) {
      const kind = lease.kind === 'unknown' ? T('not known (a command the view does not read)') : T('no TTL: only a DEL frees it');
      title(el('rect', { x: x0, y: top + 3, width: Math.max(xt - x0, 2), height: h - 6,
                         fill: lease.kind === 'unknown' ? '#e0e0e0' : '#ffcdd2', stroke: '#999', 'stroke-dasharray': '3 2' }, svg),
            T('lease {0} ({1})', kind, label));
      return;
    }
    const full = lease.until - lease.from;
    const endT = Math.min(lease.to, lease.until);
    const left = full > 0 ? (lease.until - endT) / full : 0;
    const x1 = Math.max(x(endT), x0 + 1);
    const fill = lease.kind === 'stamp' ? '#ffe0b2' : '#c8e6c9';
    title(el('polygon', { points: [x0, top, x1, top + h * (1 - left), x1, top + h, x0, top + h].join(' '),
                          fill: fill, stroke: '#558b2f', 'stroke-width': 1 }, svg),
          (lease.kind === 'stamp' ? 'expiry stamp in the value' : 'lease') + ' ' + label + ', runs out at ' + ms(lease.until) +
          (lease.until <= lease.to ? ' (ran out)' : ''));
    if (lease.until <= lease.to && lease.kind === 'ttl')
      el('line', { x1: x(lease.until), x2: x(lease.until), y1: top - 2, y2: top + h + 2, stroke: '#2e7d32', 'stroke-width': 2 }, svg);
  }

  function drawKey(lane, x) {
    const key = lane.key;
    key.owners.forEach(function (o) {
      const x0 = x(o.from), x1 = Math.max(x(o.to), x0 + 2);
      const r = title(el('rect', { x: x0, y: lane.y + 10, width: x1 - x0, height: 16, fill: colourOf(o.who),
                                   'fill-opacity': o.who === '?' ? 0.15 : 0.6 }, svg),
                      key.label + ' holds ' + (o.who === '?' ? 'a value of someone not in the story' : o.who + "'s value") +
                      ', ' + ms(o.from) + ' to ' + ms(o.to));
      if (x1 - x0 > 44) el('text', { x: x0 + 4, y: lane.y + 22, fill: '#000' }, svg, o.who === '?' ? '?' : o.who);
      return r;
    });
    key.leases.forEach(function (lease) { drawLease(lane, lease, x); });
    key.events.forEach(function (e) {
      const bad = /deleted .*'s lock/.test(e.what);
      const g = title(el('g', {}, svg), e.what + ' (' + ms(e.t) + ')');
      el('text', { x: x(e.t), y: lane.y + 24, 'text-anchor': 'middle', fill: bad ? '#c62828' : '#555',
                   'font-weight': 700, 'font-size': bad ? 18 : 12 }, g, '\u2715');
      if (bad) el('text', { x: x(e.t) - 8, y: lane.y + 52, 'text-anchor': 'end', fill: '#c62828', 'font-weight': 700 }, g, e.what);
    });
  }

  function drawMarkers() {
    const lastLabel = {};
    steps.forEach(function (s, i) {
      const lane = lanes.find(function (l) { return l.name === s.who; });
      if (lane) {
        const cy = lane.y + lane.h / 2;
        if (s.sent_ms !== undefined && stepX[i] - x(s.sent_ms) > 3)
          el('line', { x1: x(s.sent_ms), x2: stepX[i], y1: cy, y2: cy, stroke: '#607d8b', 'stroke-width': 2 }, svg);
        const g = title(el('g', { class: 'marker', 'data-step': s.step }, svg), T('step {0} at {1}', s.step, ms(s.t_ms)));
        el('circle', { cx: stepX[i], cy: cy, r: 4.5, fill: s.kind === 'narration' ? '#fff' : '#37474f', stroke: '#37474f' }, g);
        if (lastLabel[s.who] === undefined || stepX[i] - lastLabel[s.who] > 16) {
          el('text', { x: stepX[i], y: lane.y + 7, 'text-anchor': 'middle', class: 'step-no' }, g, String(s.step));
          lastLabel[s.who] = stepX[i];
        }
        g.addEventListener('click', function () { show(i); });
      }
      if (s.lock) {
        const keyLane = lanes.find(function (l) { return l.type === 'key' && l.index === s.lock.lane; });
        if (keyLane)
          el('line', { class: 'tick', 'data-step': s.step, x1: stepX[i], x2: stepX[i], y1: keyLane.y + 6, y2: keyLane.y + 10,
                       stroke: '#37474f', 'stroke-width': 1.5 }, svg);
      }
    });
  }

  let x = null;
  function layout() {
    const width = Math.max(svg.clientWidth || 0, 520);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + HEIGHT);
    svg.setAttribute('height', HEIGHT);
    x = scale(width);
    drawAxis(x, width);
    lanes.forEach(function (lane) { drawLaneFrame(lane, width); });
    drawOverlaps(x);
    lanes.forEach(function (lane) {
      if (lane.type === 'client') drawSections(lane, x);
      if (lane.type === 'key') drawKey(lane, x);
    });
    drawMarkers();
    el('rect', { class: 'curtain', x: 0, y: 0, width: width, height: HEIGHT - 20 }, svg);
    el('line', { class: 'cursor', x1: 0, x2: 0, y1: TOP - 4, y2: HEIGHT - 20 }, svg);
    const bubble = el('g', { class: 'bubble' }, svg);
    el('rect', { x: -16, y: HEIGHT - 19, width: 32, height: 17, rx: 4 }, bubble);
    el('text', { x: 0, y: HEIGHT - 6, 'text-anchor': 'middle' }, bubble, '');
  }

  function leaseText(k) {
    if (!k.held) return T('free (no key)');
    const owner = k.owner === '?' ? T("someone's value") : T("{0}'s value", k.owner);
    let lease;
    if (k.lease_kind === 'unknown' || !k.known) lease = T('lease not known here');
    else if (k.lease_left_ms === null) lease = T('no TTL');
    else if (k.lease_kind === 'stamp')
      lease = k.lease_left_ms >= 0 ? T('its stamp says {0} left (wall clock)', ms(k.lease_left_ms))
                                   : T('its stamp passed {0} ago (wall clock)', ms(-k.lease_left_ms));
    else lease = T('lease {0} left', ms(k.lease_left_ms));
    return T('holds {0}, {1}', owner, lease);
  }

  function fillNow(s) {
    const now = document.getElementById('now');
    now.textContent = '';
    const head = document.createElement('div');
    head.className = 'head';
    head.textContent = T('Step {0} of {1}', s.step, steps.length) + ' \u00b7 ' + ms(s.t_ms) + ' \u00b7 ' + (s.who === '--' ? T('narrator') : s.who);
    const text = document.createElement('div');
    text.className = 'text';
    text.textContent = document.querySelector('#step-' + s.step + ' .text').textContent;
    now.append(head, text);
    const list = document.createElement('ul');
    if (s.lock) {
      const li = document.createElement('li');
      li.textContent = T('on {0}: {1}', s.lock.key, s.lock.effect);
      if (/deleted .*'s lock/.test(s.lock.effect)) li.className = 'danger';
      list.append(li);
    }
    const inside = document.createElement('li');
    const holders = s.state.inside;
    inside.textContent = T('in the critical section: {0}', holders.length ? holders.join(', ') : T('nobody')) +
      (holders.length > 1 ? ' \u2014 ' + T('{0} holders at once', holders.length) : '');
    if (holders.length > 1) inside.className = 'danger';
    list.append(inside);
    s.state.keys.forEach(function (k) {
      const li = document.createElement('li');
      li.textContent = T('{0} on the server: {1}', k.key, leaseText(k));
      list.append(li);
    });
    now.append(list);
  }

  function show(i) {
    current = Math.max(0, Math.min(i, steps.length - 1));
    const s = steps[current];
    document.querySelectorAll('#steps .step').forEach(function (li, j) {
      li.classList.toggle('current', j === current);
      li.classList.toggle('past', j < current);
      li.classList.toggle('future', j > current);
      if (j === current) li.setAttribute('aria-current', 'step'); else li.removeAttribute('aria-current');
    });
    svg.querySelectorAll('.marker, .tick').forEach(function (m) {
      m.classList.toggle('current', Number(m.getAttribute('data-step')) === s.step);
    });
    const cx = stepX[current];
    const curtain = svg.querySelector('.curtain');
    curtain.setAttribute('x', cx + 7);
    curtain.setAttribute('width', Math.max(0, Number(svg.getAttribute('viewBox').split(' ')[2]) - cx - 7));
    document.querySelector('.verdict').classList.toggle('pending', current < steps.length - 1);
    const cursor = svg.querySelector('.cursor');
    cursor.setAttribute('x1', cx);
    cursor.setAttribute('x2', cx);
    const bubble = svg.querySelector('.bubble');
    bubble.setAttribute('transform', 'translate(' + cx + ',0)');
    bubble.querySelector('text').textContent = String(s.step);
    document.getElementById('position').textContent = T('step {0} of {1}', s.step, steps.length);
    document.getElementById('back').disabled = current === 0;
    document.getElementById('next').disabled = current === steps.length - 1;
    document.body.setAttribute('data-step', s.step);
    fillNow(s);
    const li = document.getElementById('step-' + s.step);
    if (li && li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
  }

  document.getElementById('next').addEventListener('click', function () { show(current + 1); });
  document.getElementById('back').addEventListener('click', function () { show(current - 1); });
  document.getElementById('ahead').addEventListener('click', function (e) {
    const hidden = document.body.classList.toggle('hide-ahead');
    e.target.textContent = hidden ? T('ahead: hidden') : T('ahead: shown');
  });
  document.getElementById('spacing').addEventListener('click', function (e) {
    spacing = spacing === 'time' ? 'even' : 'time';
    e.target.textContent = spacing === 'time' ? T('spacing: time') : T('spacing: one step each');
    layout();
    show(current);
  });
  document.querySelectorAll('#steps .step').forEach(function (li, j) {
    li.addEventListener('click', function () { show(j); });
  });
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const moves = { ArrowRight: 1, ArrowDown: 1, PageDown: 1, n: 1, ArrowLeft: -1, ArrowUp: -1, PageUp: -1, p: -1 };
    if (e.key in moves) show(current + moves[e.key]);
    else if (e.key === 'Home') show(0);
    else if (e.key === 'End') show(steps.length - 1);
    else return;
    e.preventDefault();
  });
  window.addEventListener('resize', function () { layout(); show(current); });
  if (!steps.length) return;
  layout();
  show(0);
})();
