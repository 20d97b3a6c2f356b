'use strict';
// What the compatibility check reads: npm's warnings while installing, and the blocks of the
// README and docs/ (read by doc-blocks.js).

/** What npm said about peer dependencies while installing (its ERESOLVE explanations). */
function peerWarnings(output) {
  return output
    .split('\n')
    .filter((line) =>
      /ERESOLVE|While resolving:|^npm warn peer |Conflicting peer|UNMET PEER/i.test(line),
    );
}

/**
 * The packages npm warned EBADENGINE about (their `engines` do not list this Node.js), once each:
 * `ours` (the package `own` names, a failure) and `thirdParty` (reported), e.g. `file-type@22.3.0`.
 */
function engineWarnings(output, own) {
  const specs = output
    .split('\n')
    .map((line) => /EBADENGINE\s+package: '([^']+)'/.exec(line)?.[1])
    .filter(Boolean);
  const unique = [...new Set(specs)];
  const isOurs = (spec) => spec.startsWith(`${own}@`);
  return { ours: unique.filter(isOurs), thirdParty: unique.filter((spec) => !isOurs(spec)) };
}

/**
 * What a block of the README or docs/ is: a Vitest test file (it imports from 'vitest'), a test
 * file written with the globals Jest and Vitest (with `globals: true`, as `nest new` sets it) both
 * provide (a top-level `describe(`), or code.
 */
function readmeBlockKind(code) {
  if (/from 'vitest'/.test(code)) return 'vitest test';
  return /^describe\(/m.test(code) ? 'test' : 'code';
}

module.exports = { engineWarnings, peerWarnings, readmeBlockKind };
