// json_query: a corral tool plugin in JavaScript (componentize-js) that reads a JSON file of
// the workspace and returns the values a path expression selects, or an outline of the file.

import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { roots } from 'corral:plugin/workspace@0.1.0';

const TOOL = 'json_query';
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const MAX_VALUE_CHARS = 400;

// componentize-js turns a thrown { payload } into the `err` of the result; anything else traps.
class ToolError extends Error {
  constructor(kind, message, hint) {
    super(message);
    this.payload = { kind, message, hint };
  }
}

function absolute(path) {
  if (path.startsWith('/')) return path;
  const root = roots()[0]?.path ?? '/';
  return root.replace(/\/$/, '') + '/' + path;
}

// Reads a whole file through the preopen whose path is the longest prefix of `abs`.
function readFile(shown, abs) {
  let best = null;
  for (const [descriptor, mount] of getDirectories()) {
    const prefix = mount.replace(/\/$/, '') + '/';
    if (abs.startsWith(prefix) && (!best || prefix.length > best.prefix.length)) best = { descriptor, prefix };
  }
  if (!best) throw new ToolError('permission-denied', `'${shown}' is outside the workspace`);
  try {
    const file = best.descriptor.openAt({ symlinkFollow: true }, abs.slice(best.prefix.length), {}, { read: true });
    const size = file.stat().size;
    if (size > BigInt(MAX_FILE_BYTES)) {
      throw new ToolError('too-large', `'${shown}' is ${size} bytes; the limit is ${MAX_FILE_BYTES}`);
    }
    const chunks = [];
    let offset = 0n;
    for (;;) {
      const [data, end] = file.read(65536n, offset);
      chunks.push(data);
      offset += BigInt(data.length);
      if (end || data.length === 0) break;
    }
    const all = new Uint8Array(Number(offset));
    let at = 0;
    for (const c of chunks) { all.set(c, at); at += c.length; }
    return new TextDecoder().decode(all);
  } catch (e) {
    if (e instanceof ToolError) throw e;
    const code = e?.payload ?? String(e);
    if (code === 'no-entry') {
      throw new ToolError('not-found', `'${shown}' does not exist`,
        'paths are relative to the workspace root; list_files shows what is there');
    }
    if (code === 'is-directory') throw new ToolError('invalid-args', `'${shown}' is a directory, not a JSON file`);
    if (code === 'not-permitted' || code === 'access') {
      throw new ToolError('permission-denied', `'${shown}' is outside the workspace`);
    }
    throw new ToolError('io', `cannot read '${shown}': ${code}`);
  }
}

// ---- path expressions: $.a.b[0].*, ..name, ["odd key"] ------------------------------------

// Splits a query into steps: {key}, {index}, {all}, {deep: key}.
function parse(query) {
  const steps = [];
  let i = 0;
  const q = query.trim();
  if (q.startsWith('$')) i = 1;
  const name = () => {
    const m = /^[^.[\]\s]+/.exec(q.slice(i));
    if (!m) throw new ToolError('invalid-args', `expected a key at position ${i} of the query '${query}'`);
    i += m[0].length;
    return m[0];
  };
  if (i === 0 && q.length > 0 && q[0] !== '.' && q[0] !== '[') {
    const n = name();
    steps.push(n === '*' ? { all: true } : { key: n });
  }
  while (i < q.length) {
    if (q.startsWith('..', i)) {
      i += 2;
      steps.push({ deep: name() });
    } else if (q[i] === '.') {
      i += 1;
      const n = name();
      steps.push(n === '*' ? { all: true } : { key: n });
    } else if (q[i] === '[') {
      const close = q.indexOf(']', i);
      if (close < 0) throw new ToolError('invalid-args', `unclosed '[' in the query '${query}'`);
      const inside = q.slice(i + 1, close).trim();
      i = close + 1;
      if (inside === '*') steps.push({ all: true });
      else if (/^-?\d+$/.test(inside)) steps.push({ index: Number(inside) });
      else if (/^(".*"|'.*')$/.test(inside)) steps.push({ key: inside.slice(1, -1) });
      else throw new ToolError('invalid-args', `'[${inside}]' is not an index, "*" or a quoted key`);
    } else {
      throw new ToolError('invalid-args', `unexpected '${q[i]}' at position ${i} of the query '${query}'`,
        'write paths like dependencies.react, items[0].name, scripts.*, ..version');
    }
  }
  return steps;
}

const keyPath = (path, key) => /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

// Every [path, value] the steps select from `root`, in document order.
function select(root, steps) {
  let current = [['$', root]];
  for (const step of steps) {
    const next = [];
    for (const [path, value] of current) {
      if (step.key !== undefined) {
        if (value && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, step.key)) {
          next.push([keyPath(path, step.key), value[step.key]]);
        }
      } else if (step.index !== undefined) {
        if (Array.isArray(value)) {
          const i = step.index < 0 ? value.length + step.index : step.index;
          if (i >= 0 && i < value.length) next.push([`${path}[${i}]`, value[i]]);
        }
      } else if (step.all) {
        if (Array.isArray(value)) value.forEach((v, i) => next.push([`${path}[${i}]`, v]));
        else if (value && typeof value === 'object') for (const k of Object.keys(value)) next.push([keyPath(path, k), value[k]]);
      } else {
        const walk = (p, v) => {
          if (Array.isArray(v)) v.forEach((x, i) => walk(`${p}[${i}]`, x));
          else if (v && typeof v === 'object') {
            for (const k of Object.keys(v)) {
              if (k === step.deep) next.push([keyPath(p, k), v[k]]);
              walk(keyPath(p, k), v[k]);
            }
          }
        };
        walk(path, value);
      }
    }
    current = next;
  }
  return current;
}

function short(value) {
  const text = JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}... (${text.length} chars)` : text;
}

function kind(v) {
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (v === null) return 'null';
  if (typeof v === 'object') return `object with ${Object.keys(v).length} keys`;
  return typeof v;
}

// The top two levels of the document, for finding one's way in a large file.
function outline(doc) {
  const lines = [`$: ${kind(doc)}`];
  const entries = Array.isArray(doc) ? doc.slice(0, 3).map((v, i) => [`[${i}]`, v])
    : doc && typeof doc === 'object' ? Object.entries(doc) : [];
  for (const [k, v] of entries.slice(0, 50)) {
    lines.push(`  ${k}: ${kind(v)}${typeof v !== 'object' || v === null ? ` = ${short(v)}` : ''}`);
  }
  if (entries.length > 50) lines.push(`  ... ${entries.length - 50} more`);
  return lines.join('\n');
}

// The line and column of a JSON.parse error whose message gives only a position (V8 style;
// SpiderMonkey, the engine here, already says "at line L column C").
function where(text, message) {
  const m = /line \d+/.test(message) ? null : /position (\d+)/.exec(message);
  if (!m) return '';
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  return ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
}

export const tool = {
  describe() {
    return [{
      name: TOOL,
      description: 'Reads a JSON file of the workspace and returns the values a path expression selects, ' +
        'each with its full path: `dependencies.*`, `items[0].name`, `..version` (any depth), ' +
        '`["key with.dots"]`. Without a query it returns an outline of the top two levels. ' +
        'Use it instead of reading a whole large JSON file.',
      inputSchema: JSON.stringify({
        type: 'object',
        properties: {
          path: { type: 'string', description: 'The JSON file, relative to the workspace root' },
          query: { type: 'string', description: 'The path expression; omit it for an outline' },
          max_results: { type: 'integer', minimum: 1, maximum: 1000, description: 'Most matches to return (default 100)' },
        },
        required: ['path'],
        additionalProperties: false,
      }),
      hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      capabilities: [],
    }];
  },

  invoke(name, argsJson) {
    if (name !== TOOL) throw new ToolError('not-found', `this plugin has no tool named '${name}'`);
    let args;
    try {
      args = JSON.parse(argsJson);
    } catch (e) {
      throw new ToolError('invalid-args', `the arguments are not JSON: ${e.message}`);
    }
    const { path, query, max_results: max = 100 } = args ?? {};
    if (typeof path !== 'string' || path === '') {
      throw new ToolError('invalid-args', "'path' is required", 'pass a JSON file path, e.g. {"path": "package.json"}');
    }
    if (query !== undefined && typeof query !== 'string') throw new ToolError('invalid-args', "'query' must be a string");
    if (!Number.isInteger(max) || max < 1 || max > 1000) {
      throw new ToolError('invalid-args', "'max_results' must be an integer from 1 to 1000");
    }
    const text = readFile(path, absolute(path));
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new ToolError('unsupported', `'${path}' is not valid JSON${where(text, e.message)}: ${e.message}`,
        'validate_config reports the exact position of syntax errors');
    }
    let out;
    if (query === undefined || query.trim() === '' || query.trim() === '$') {
      out = outline(doc);
    } else {
      const found = select(doc, parse(query));
      if (found.length === 0) {
        out = `No match for ${query} in ${path}.\n${outline(doc)}`;
      } else {
        const shown = found.slice(0, max);
        out = `${found.length} match${found.length === 1 ? '' : 'es'} for ${query} in ${path}` +
          (found.length > max ? ` (first ${max} shown; raise max_results for more)` : '') + '\n' +
          shown.map(([p, v]) => `${p} = ${short(v)}`).join('\n');
      }
    }
    return { content: [{ tag: 'text', val: out }], truncated: false };
  },
};
