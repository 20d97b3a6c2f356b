'use strict';
// The documentation's code examples: README.md and every page under docs/. Read by the README
// test (test/readme/readme-code-compiles.spec.ts), which compiles every ```ts block, and by the
// compatibility check (check.js), which writes them into its apps.
const fs = require('node:fs');
const path = require('node:path');

/** Languages of a TypeScript example: a fence naming one of them must be exactly ```ts. */
const TYPESCRIPT = new Set(['ts', 'typescript', 'tsx', 'mts', 'cts']);

/** README.md, then every .md file under docs/ (sorted), as paths relative to root with `/`. */
function docFiles(root) {
  const files = ['README.md'];
  const walk = (dir) => {
    const full = path.join(root, dir);
    if (!fs.existsSync(full)) return;
    for (const entry of fs.readdirSync(full, { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  return [files[0], ...files.slice(1).sort()];
}

/**
 * Every fenced code block of a Markdown text, in order: its opening line (1-based), indentation,
 * fence, info string, its code (each line ending with a newline), and whether it was closed.
 */
function fences(text) {
  const blocks = [];
  let open;
  text.split('\n').forEach((line, i) => {
    if (!open) {
      const start = /^( *)(`{3,}|~{3,})(.*)$/.exec(line);
      if (start)
        open = { line: i + 1, indent: start[1], fence: start[2], info: start[3], lines: [] };
      return;
    }
    const end = /^ *(`{3,}|~{3,})\s*$/.exec(line);
    if (end && end[1][0] === open.fence[0] && end[1].length >= open.fence.length) {
      blocks.push(closeBlock(open, true));
      open = undefined;
    } else {
      open.lines.push(line);
    }
  });
  if (open) blocks.push(closeBlock(open, false));
  return blocks;
}

function closeBlock({ lines, ...block }, closed) {
  return { ...block, code: lines.map((line) => `${line}\n`).join(''), closed };
}

/** The blocks that are compiled: a ```ts fence at the start of a line, closed. */
function tsBlocks(text) {
  return fences(text)
    .filter((block) => isCompiled(block))
    .map(({ line, code }) => ({ line, code }));
}

function isCompiled(block) {
  return block.indent === '' && block.fence === '```' && block.info === 'ts' && block.closed;
}

/**
 * TypeScript examples that would not be compiled: a fence naming a TypeScript language in any
 * other form (```typescript, ```ts with a title or trailing spaces, an indented fence, ~~~ts, an
 * unclosed block). Each with its line and why.
 */
function uncompiledExamples(text) {
  return fences(text)
    .filter((block) => {
      const language = block.info.trim().split(/\s+/)[0].toLowerCase();
      return TYPESCRIPT.has(language) && !isCompiled(block);
    })
    .map((block) => ({
      line: block.line,
      fence: `${block.indent}${block.fence}${block.info}`,
      reason: block.closed ? 'not written as ```ts at the start of a line' : 'never closed',
    }));
}

/** The name check.js gives a block of a file: readme-line-N, or docs-<page>-line-N. */
function blockName(file, line) {
  const base = file === 'README.md' ? 'readme' : file.replace(/\.md$/, '').replace(/\//g, '-');
  return `${base}-line-${line}`;
}

module.exports = { blockName, docFiles, fences, tsBlocks, uncompiledExamples };
