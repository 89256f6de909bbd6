// {{name}}: a corral tool plugin in JavaScript, made a component by componentize-js.
// corral calls tool.describe() once, then tool.invoke() for each call, in a fresh sandboxed
// instance that sees the workspace read-only through the WASI preopens.

import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { roots } from 'corral:plugin/workspace@0.1.0';

const TOOL = '{{tool}}';

// A failed call: componentize-js turns a thrown { payload } into the `err` of the result.
// (Throwing anything else, such as a plain Error, makes the call trap instead.)
class ToolError extends Error {
  constructor(kind, message, hint) {
    super(message);
    this.payload = { kind, message, hint };
  }
}

// Relative paths start at the workspace root: the first root the host reports.
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
    if (abs.startsWith(prefix) && (!best || prefix.length > best.prefix.length)) {
      best = { descriptor, prefix };
    }
  }
  if (!best) {
    throw new ToolError('permission-denied', `'${shown}' is outside the workspace`,
      'only files inside the workspace can be read');
  }
  try {
    const file = best.descriptor.openAt({ symlinkFollow: true }, abs.slice(best.prefix.length), {}, { read: true });
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
    return all;
  } catch (e) {
    const code = e?.payload ?? String(e);
    if (code === 'no-entry') {
      throw new ToolError('not-found', `'${shown}' does not exist`,
        'check the path with list_files; paths are relative to the workspace root');
    }
    if (code === 'is-directory') throw new ToolError('invalid-args', `'${shown}' is a directory, not a file`);
    if (code === 'not-permitted' || code === 'access') {
      throw new ToolError('permission-denied', `'${shown}' is outside the workspace`,
        'only files inside the workspace can be read');
    }
    throw new ToolError('io', `cannot read '${shown}': ${code}`);
  }
}

// Lines (newline characters, plus a last line without one), words and bytes.
function count(bytes) {
  let lines = 0, words = 0, inWord = false;
  for (const b of bytes) {
    if (b === 10) lines++;
    const space = b === 32 || (b >= 9 && b <= 13);
    if (!space && !inWord) words++;
    inWord = !space;
  }
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) lines++;
  return { lines, words, bytes: bytes.length };
}

export const tool = {
  describe() {
    return [{
      name: TOOL,
      description: 'Counts the lines, words and bytes of a text file in the workspace. ' +
        'Use it to size a file before reading it.',
      inputSchema: JSON.stringify({
        type: 'object',
        properties: {
          path: { type: 'string', description: 'The file, relative to the workspace root or absolute inside it' },
        },
        required: ['path'],
        additionalProperties: false,
      }),
      hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      // This tool only reads; a tool that writes would list 'workspace-write'.
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
    const path = args?.path;
    if (typeof path !== 'string' || path === '') {
      throw new ToolError('invalid-args', "'path' is required",
        'pass a file path relative to the workspace root, e.g. {"path": "README.md"}');
    }
    const c = count(readFile(path, absolute(path)));
    return { content: [{ tag: 'text', val: `${path}: ${c.lines} lines, ${c.words} words, ${c.bytes} bytes` }], truncated: false };
  },
};
