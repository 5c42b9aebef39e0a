#!/usr/bin/env node
'use strict';
// scan-jsonl.js [--rulebook FILE] < in.jsonl > out.jsonl
//
// The JavaScript twin of `caddy prompt-scan --jsonl`: each input line is a
// JSON object with "text" (a string) or "text_base64" (raw bytes) plus any
// other fields; each output line is those other fields plus "result" (SPEC
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

// lineText decodes one input line; invalid UTF-8 becomes U+FFFD per byte, as
// Go's encoding/json reads it.
function lineText(buf) {
  return isUtf8(buf) ? buf.toString('utf8') : spec.decodeBytes(buf).text;
}

// scanLine turns one input line into one output line (without the newline),
// or returns null for a blank line.
function scanLine(rb, line, lineNo) {
  const src = lineText(line);
  if (src.trim() === '') return null;
  let rec;
  try {
    rec = JSON.parse(src);
  } catch (e) {
    fail(`line ${lineNo}: ${e.message}`);
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) fail(`line ${lineNo}: not a JSON object`);
  let bytes;
  let b64 = false;
  if (typeof rec.text === 'string') {
    // Buffer.from turns a lone surrogate into U+FFFD, as Go's decoder does.
    bytes = Buffer.from(rec.text, 'utf8');
  } else if (typeof rec.text_base64 === 'string') {
    bytes = Buffer.from(rec.text_base64, 'base64');
    b64 = true;
  } else {
    fail(`line ${lineNo}: needs a "text" or "text_base64" string`);
  }
  const r = spec.scan(rb, bytes);
  const result = { verdict: r.verdict, matches: r.matches, category_counts: r.category_counts };
  if (b64) result.sanitized_base64 = r.sanitized.toString('base64');
  else result.sanitized = r.sanitized.toString('utf8');
  const o = {};
  for (const k of Object.keys(rec)) if (k !== 'text' && k !== 'text_base64') o[k] = rec[k];
  o.result = result;
  return goJSON(o);
}

function fail(msg) {
  process.stderr.write(msg + '\n');
  process.exit(3);
}

// Input is streamed: every chunk's complete lines are answered with one
// write, so a caller can also talk to this process one line at a time.
function main() {
  const rb = spec.loadRulebook(rulebookPath);
  let parts = []; // the current incomplete line
  let lineNo = 0;
  const answer = (line, out) => {
    const s = scanLine(rb, line, ++lineNo);
    if (s !== null) out.push(s, '\n');
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
    if (out.length) process.stdout.write(out.join(''));
  });
  process.stdin.on('end', () => {
    const out = [];
    if (parts.length) answer(Buffer.concat(parts), out);
    if (out.length) process.stdout.write(out.join(''));
  });
}

main();
