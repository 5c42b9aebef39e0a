'use strict';
// A straightforward JavaScript implementation of docs/SPEC.md, used only by tests
// (the differential test against the Go engine) and as the V8 baseline of
// bench/compare.sh. Every rule runs as `new RegExp(pattern, 'gi')` with
// matchAll: V8's own regex engine decides what matches. No dependencies.

const fs = require('fs');
const path = require('path');
const { isUtf8 } = require('buffer');

const VIEWS = ['original', 'leetspeak-folded', 'percent-decoded', 'base64-decoded'];
const V_ORIGINAL = 0;
const V_LEET = 1;
const V_PERCENT = 2;
const V_BASE64 = 3;

const DEFAULT_RULEBOOK = path.join(__dirname, '..', '..', 'rulebook', 'prompt-injection-rules-v1.json');

const SEVERITY_RANK = { malicious: 2, suspicious: 1 };

// ---------------------------------------------------------------------------
// Rulebook

function loadRulebook(file) {
  return compileRulebook(JSON.parse(fs.readFileSync(file || DEFAULT_RULEBOOK, 'utf8')));
}

function compileRulebook(doc) {
  return {
    id: doc.rules_id,
    rules: doc.rules.map((r, index) => ({
      index,
      id: r.id,
      category: r.category,
      severity: r.severity,
      // docs/SPEC.md section 2: every pattern runs with flags gi.
      re: new RegExp(r.pattern, 'gi'),
    })),
  };
}

// ---------------------------------------------------------------------------
// docs/SPEC.md section 1: bytes to UTF-16, exactly as Go's utf8.DecodeRune.

// decodeRune returns [codePoint, size] for the bytes of buf at i; an invalid
// or truncated sequence gives [0xFFFD, 1].
function decodeRune(buf, i) {
  const n = buf.length;
  const b0 = buf[i];
  if (b0 < 0x80) return [b0, 1];
  const bad = [0xfffd, 1];
  const cont = (k) => i + k < n && buf[i + k] >= 0x80 && buf[i + k] <= 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    if (!cont(1)) return bad;
    return [((b0 & 0x1f) << 6) | (buf[i + 1] & 0x3f), 2];
  }
  if (b0 >= 0xe0 && b0 <= 0xef) {
    if (i + 1 >= n) return bad;
    const b1 = buf[i + 1];
    // E0 needs A0..BF (no overlong), ED needs 80..9F (no surrogates).
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    if (b1 < lo || b1 > hi || !cont(2)) return bad;
    return [((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (buf[i + 2] & 0x3f), 3];
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    if (i + 1 >= n) return bad;
    const b1 = buf[i + 1];
    // F0 needs 90..BF (no overlong), F4 needs 80..8F (nothing above U+10FFFF).
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    if (b1 < lo || b1 > hi || !cont(2) || !cont(3)) return bad;
    return [((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((buf[i + 2] & 0x3f) << 6) | (buf[i + 3] & 0x3f), 4];
  }
  return bad;
}

function unitsToString(units, n) {
  let s = '';
  for (let i = 0; i < n; i += 8192) {
    s += String.fromCharCode.apply(null, units.subarray(i, Math.min(n, i + 8192)));
  }
  return s;
}

// decodeBytes returns the text of buf and, for each UTF-16 unit (plus one
// past the end), the byte offset where that unit's character begins.
function decodeBytes(buf) {
  const units = new Uint16Array(buf.length);
  const offsets = new Int32Array(buf.length + 1);
  let n = 0;
  for (let i = 0; i < buf.length; ) {
    const [cp, size] = decodeRune(buf, i);
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      offsets[n] = i;
      units[n++] = 0xd800 + (v >> 10);
      offsets[n] = i;
      units[n++] = 0xdc00 + (v & 0x3ff);
    } else {
      offsets[n] = i;
      units[n++] = cp;
    }
    i += size;
  }
  offsets[n] = buf.length;
  return { text: unitsToString(units, n), offsets: offsets.subarray(0, n + 1) };
}

// decodeText is decodeBytes without the offsets. Valid UTF-8 decodes the same
// way in every decoder, so Node's native one is used for it (isUtf8 rejects
// overlong forms, surrogates and values above U+10FFFF, as utf8.Valid does).
function decodeText(buf) {
  if (isUtf8(buf)) return buf.toString('utf8');
  return decodeBytes(buf).text;
}

// ---------------------------------------------------------------------------
// docs/SPEC.md sections 2-3: matching and views.

// forEachMatch calls fn(start, end) for every match of rule in text, as
// String.prototype.matchAll finds them.
function forEachMatch(rule, text, fn) {
  for (const m of text.matchAll(rule.re)) fn(m.index, m.index + m[0].length);
}

const LEET = { 0: 'o', 1: 'i', 3: 'e', 4: 'a', 5: 's', 7: 't', '@': 'a', $: 's' };
const LEET_RE = /[013457@$]/g;

function isLeet(c) {
  return Object.prototype.hasOwnProperty.call(LEET, c);
}

function isHex(c) {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function isEscapeAt(text, i) {
  return text.charCodeAt(i) === 37 && i + 2 < text.length && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2));
}

// percentView builds the percent-decoded text with, per decoded unit, the
// original range it maps to and whether it came from an escape.
function percentView(text) {
  const n = text.length;
  const units = new Uint16Array(n);
  const mapStart = new Int32Array(n);
  const mapEnd = new Int32Array(n);
  const escaped = new Uint8Array(n);
  let m = 0;
  let i = 0;
  while (i < n) {
    if (!isEscapeAt(text, i)) {
      units[m] = text.charCodeAt(i);
      mapStart[m] = i;
      mapEnd[m] = i + 1;
      m++;
      i++;
      continue;
    }
    const runStart = i;
    const bytes = [];
    while (i < n && isEscapeAt(text, i)) {
      bytes.push(parseInt(text.substr(i + 1, 2), 16));
      i += 3;
    }
    const buf = Buffer.from(bytes);
    for (let k = 0; k < buf.length; ) {
      const [cp, size] = decodeRune(buf, k);
      const s = runStart + 3 * k;
      const e = runStart + 3 * (k + size);
      const cus = cp >= 0x10000 ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp];
      for (const cu of cus) {
        units[m] = cu;
        mapStart[m] = s;
        mapEnd[m] = e;
        escaped[m] = 1;
        m++;
      }
      k += size;
    }
  }
  return { text: unitsToString(units, m), mapStart, mapEnd, escaped };
}

const B64_RUN_RE = /[A-Za-z0-9+/_-]{16,}/g;
const B64_STD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

// decodeBase64Run decodes a run (no padding), ignoring leftover bits.
function decodeBase64Run(run, alphabet) {
  const out = [];
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < run.length; i++) {
    acc = ((acc << 6) | alphabet.indexOf(run[i])) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

function isControl(c) {
  return (c <= 0x1f && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c <= 0x9f);
}

// base64Text returns the decoded text of a run, or null when the token does
// not decode under docs/SPEC.md section 3.4.
function base64Text(run) {
  const std = /[+/]/.test(run);
  const url = /[-_]/.test(run);
  if (std && url) return null;
  if (run.length % 4 === 1) return null;
  const bytes = decodeBase64Run(run, url ? B64_URL : B64_STD);
  if (!isUtf8(bytes)) return null;
  const text = bytes.toString('utf8');
  if (text.length < 4) return null;
  let controls = 0;
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) controls++;
  if (controls * 10 > text.length) return null;
  return text;
}

// findMatches runs every view over text and returns the merged matches of
// docs/SPEC.md section 4, ordered.
function findMatches(rb, text) {
  // spans[ruleIndex] = [[start, end, viewIndex], ...]
  const spans = rb.rules.map(() => []);

  // original
  for (const rule of rb.rules) {
    forEachMatch(rule, text, (s, e) => spans[rule.index].push([s, e, V_ORIGINAL]));
  }

  // leetspeak-folded: same positions; a span must hold a replaced unit.
  if (/[013457@$]/.test(text)) {
    const folded = text.replace(LEET_RE, (c) => LEET[c]);
    for (const rule of rb.rules) {
      forEachMatch(rule, folded, (s, e) => {
        for (let k = s; k < e; k++) {
          if (isLeet(text[k])) {
            spans[rule.index].push([s, e, V_LEET]);
            return;
          }
        }
      });
    }
  }

  // percent-decoded: spans map back through the escapes.
  if (/%[0-9A-Fa-f]{2}/.test(text)) {
    const pv = percentView(text);
    for (const rule of rb.rules) {
      forEachMatch(rule, pv.text, (ds, de) => {
        let fromEscape = false;
        for (let k = ds; k < de; k++) {
          if (pv.escaped[k]) {
            fromEscape = true;
            break;
          }
        }
        if (fromEscape && de > ds) spans[rule.index].push([pv.mapStart[ds], pv.mapEnd[de - 1], V_PERCENT]);
      });
    }
  }

  // base64-decoded: tokens of the original text, scanned recursively.
  for (const m of text.matchAll(B64_RUN_RE)) {
    const run = m[0];
    const start = m.index;
    let end = start + run.length;
    for (let p = 0; p < 2 && text.charCodeAt(end) === 61; p++) end++;
    const inner = base64Text(run);
    if (inner === null) continue;
    for (const im of findMatches(rb, inner)) spans[im.rule.index].push([start, end, V_BASE64]);
  }

  // Merge each rule's spans that overlap or touch.
  const matches = [];
  for (const rule of rb.rules) {
    const list = spans[rule.index];
    if (list.length === 0) continue;
    list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let cur = null;
    for (const [s, e, v] of list) {
      if (cur !== null && cur.end >= s) {
        if (e > cur.end) cur.end = e;
        cur.views[v] = true;
      } else {
        cur = { rule, start: s, end: e, views: [false, false, false, false] };
        cur.views[v] = true;
        matches.push(cur);
      }
    }
  }
  matches.sort((a, b) => a.start - b.start || a.rule.index - b.rule.index || a.end - b.end);
  return matches;
}

// ---------------------------------------------------------------------------
// docs/SPEC.md sections 5-8.

// sanitize replaces each group of overlapping or touching matches with its
// label and keeps every other byte of buf.
function sanitize(buf, offsets, matches) {
  if (matches.length === 0) return buf;
  const sorted = matches.slice().sort((a, b) => a.start - b.start);
  const groups = [];
  let g = null;
  for (const m of sorted) {
    if (g !== null && m.start <= g.end) {
      if (m.end > g.end) g.end = m.end;
      if (better(m, g.best)) g.best = m;
    } else {
      g = { start: m.start, end: m.end, best: m };
      groups.push(g);
    }
  }
  const parts = [];
  let at = 0;
  for (const gr of groups) {
    const bs = offsets[gr.start];
    const be = offsets[gr.end];
    parts.push(buf.subarray(at, bs), Buffer.from('[removed: ' + gr.best.rule.category + ']', 'utf8'));
    at = be;
  }
  parts.push(buf.subarray(at));
  return Buffer.concat(parts);
}

// better reports whether match a labels a group ahead of b: higher severity,
// then longer, then earlier in the rulebook.
function better(a, b) {
  const ra = SEVERITY_RANK[a.rule.severity] || 0;
  const rb = SEVERITY_RANK[b.rule.severity] || 0;
  if (ra !== rb) return ra > rb;
  const la = a.end - a.start;
  const lb = b.end - b.start;
  if (la !== lb) return la > lb;
  return a.rule.index < b.rule.index;
}

// scan applies the rulebook to a Buffer and returns
// {verdict, matches, category_counts, sanitized (a Buffer)}.
function scan(rb, buf) {
  const text = decodeText(buf);
  const found = findMatches(rb, text);
  let verdict = 'safe';
  const counts = {};
  for (const m of found) {
    if (m.rule.severity === 'malicious') verdict = 'malicious';
    else if (verdict === 'safe') verdict = 'suspicious';
    counts[m.rule.category] = (counts[m.rule.category] || 0) + 1;
  }
  const category_counts = {};
  for (const k of Object.keys(counts).sort()) category_counts[k] = counts[k];
  const sanitized = found.length === 0 ? buf : sanitize(buf, decodeBytes(buf).offsets, found);
  return {
    verdict,
    matches: found.map((m) => ({
      rule: m.rule.id,
      category: m.rule.category,
      severity: m.rule.severity,
      start: m.start,
      end: m.end,
      views: VIEWS.filter((_, i) => m.views[i]),
    })),
    category_counts,
    sanitized,
  };
}

module.exports = { loadRulebook, compileRulebook, scan, decodeBytes, decodeText, DEFAULT_RULEBOOK };
