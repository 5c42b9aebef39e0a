#!/usr/bin/env node
'use strict';
// scan-jsonl.js [--rulebook FILE] < in.jsonl > out.jsonl
//
// The JavaScript twin of `caddy prompt-scan --jsonl`: each input line is a
// JSON object with "text" (a string) or "text_base64" (raw bytes) plus any
// other fields; each output line is those other fields plus "result" (docs/SPEC.md
// section 8), with "sanitized_base64" in place of "sanitized" for
// text_base64 inputs. Output is encoded as Go's encoding/json does, so the
// two programs' outputs can be compared byte for byte.

const fs = require('fs');
const { isUtf8 } = require('buffer');
const spec = require('./spec.js');

function usage(msg) {
  process.stderr.write((msg ? msg + '\n' : '') + 'usage: scan-jsonl.js [--rulebook FILE] < in.jsonl\n');
  process.exit(3);
}

let rulebookPath = null;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rulebook' && i + 1 < args.length) rulebookPath = args[++i];
  else if (args[i].startsWith('--rulebook=')) rulebookPath = args[i].slice('--rulebook='.length);
  else usage('unknown argument ' + args[i]);
}

// goJSON is JSON.stringify plus the escapes Go's encoder adds by default.
function goJSON(v) {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

// A JSON string, unrolled so that long strings need no backtracking.
const STRING_RE = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"/y;
const SCALAR_RE = /[^,}\]\s]+/y;
const WS_RE = /[ \t\n\r]*/y;
const NESTED_RE = /[{}[\]"]/g;
const COMPACT_RE = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"|[ \t\n\r]+/g;

// splitObject splits one line holding a JSON object into its members, each
// with its key as written and its value as written, so that the other
// fields pass through exactly as the Go command passes them (compacted,
// escapes and number spellings kept).
function splitObject(s) {
  let at = 0;
  const ws = () => {
    WS_RE.lastIndex = at;
    WS_RE.exec(s);
    at = WS_RE.lastIndex;
  };
  const string = () => {
    STRING_RE.lastIndex = at;
    if (!STRING_RE.test(s)) throw new Error('invalid JSON');
    const raw = s.slice(at, STRING_RE.lastIndex);
    at = STRING_RE.lastIndex;
    return raw;
  };
  const value = () => {
    const c = s[at];
    if (c === '"') return string();
    const start = at;
    if (c === '{' || c === '[') {
      let depth = 0;
      for (;;) {
        NESTED_RE.lastIndex = at;
        const m = NESTED_RE.exec(s);
        if (m === null) throw new Error('invalid JSON');
        at = m.index;
        if (m[0] === '"') {
          string();
          continue;
        }
        at++;
        depth += m[0] === '{' || m[0] === '[' ? 1 : -1;
        if (depth === 0) break;
      }
      const raw = s.slice(start, at);
      JSON.parse(raw); // validates
      return raw.replace(COMPACT_RE, (t) => (t[0] === '"' ? t : ''));
    }
    SCALAR_RE.lastIndex = at;
    if (!SCALAR_RE.test(s)) throw new Error('invalid JSON');
    at = SCALAR_RE.lastIndex;
    const raw = s.slice(start, at);
    JSON.parse(raw);
    return raw;
  };
  const members = [];
  ws();
  if (s[at++] !== '{') throw new Error('not a JSON object');
  ws();
  if (s[at] === '}') at++;
  else {
    for (;;) {
      const rawKey = string();
      ws();
      if (s[at++] !== ':') throw new Error('invalid JSON');
      ws();
      const rawValue = value();
      members.push({ rawKey, key: JSON.parse(rawKey), rawValue });
      ws();
      const c = s[at++];
      if (c === '}') break;
      if (c !== ',') throw new Error('invalid JSON');
      ws();
    }
  }
  ws();
  if (at !== s.length) throw new Error('invalid JSON');
  return members;
}

// scanLine turns one input line into one output line (without the newline),
// or returns null for a blank line. A line that is not valid UTF-8 is split
// as Latin-1 so that its other fields keep their bytes, as in Go; its text
// is decoded with U+FFFD per invalid byte, as Go's encoding/json does.
function scanLine(rb, line, lineNo) {
  const valid = isUtf8(line);
  const src = line.toString(valid ? 'utf8' : 'latin1');
  if (src.trim() === '') return null;
  let members;
  try {
    members = splitObject(src);
  } catch (e) {
    fail(`line ${lineNo}: ${e.message}`);
  }
  let text = null;
  let b64 = false;
  for (const m of members) {
    if (m.key !== 'text' && m.key !== 'text_base64') continue;
    let raw = m.rawValue;
    if (!valid) raw = spec.decodeBytes(Buffer.from(raw, 'latin1')).text;
    const v = JSON.parse(raw);
    if (typeof v !== 'string') fail(`line ${lineNo}: "${m.key}" must be a string`);
    b64 = m.key === 'text_base64';
    // Buffer.from turns a lone surrogate into U+FFFD, as Go's decoder does.
    text = b64 ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8');
  }
  if (text === null) fail(`line ${lineNo}: needs a "text" or "text_base64" string`);
  const r = spec.scan(rb, text);
  const result = { verdict: r.verdict, matches: r.matches, category_counts: r.category_counts };
  if (b64) result.sanitized_base64 = r.sanitized.toString('base64');
  else result.sanitized = r.sanitized.toString('utf8');
  let out = '{';
  for (const m of members) {
    if (m.key !== 'text' && m.key !== 'text_base64') out += m.rawKey + ':' + m.rawValue + ',';
  }
  return { head: out, valid, tail: '"result":' + goJSON(result) + '}' };
}

function fail(msg) {
  process.stderr.write(msg + '\n');
  process.exit(3);
}

// flush writes a batch of output pieces (strings, or Buffers for lines whose
// other fields hold invalid UTF-8) with one write.
function flush(out) {
  if (out.length === 0) return;
  if (out.every((p) => typeof p === 'string')) process.stdout.write(out.join(''));
  else process.stdout.write(Buffer.concat(out.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p))));
}

// Input is streamed: every chunk's complete lines are answered with one
// write, so a caller can also talk to this process one line at a time.
function main() {
  const rb = spec.loadRulebook(rulebookPath);
  let parts = []; // the current incomplete line
  let lineNo = 0;
  const answer = (line, out) => {
    const r = scanLine(rb, line, ++lineNo);
    if (r === null) return;
    if (r.valid) out.push(r.head, r.tail, '\n');
    else out.push(Buffer.concat([Buffer.from(r.head, 'latin1'), Buffer.from(r.tail + '\n', 'utf8')]));
  };
  process.stdin.on('data', (chunk) => {
    const out = [];
    let at = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, at)) {
      let line = chunk.subarray(at, nl);
      if (parts.length) {
        parts.push(line);
        line = Buffer.concat(parts);
        parts = [];
      }
      answer(line, out);
      at = nl + 1;
    }
    if (at < chunk.length) parts.push(chunk.subarray(at));
    flush(out);
  });
  process.stdin.on('end', () => {
    const out = [];
    if (parts.length) answer(Buffer.concat(parts), out);
    flush(out);
  });
}

main();
