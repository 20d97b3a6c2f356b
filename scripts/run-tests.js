#!/usr/bin/env node
'use strict';
// `npm test`: the whole suite (unit, integration, e2e) against real servers started for the run.
// Extra arguments go to Jest, e.g. `npm test -- test/substrate`.
const path = require('node:path');
const { runWithServers } = require('./run-with-servers');

// --forceExit: kafkajs keeps retry timers alive for a while after disconnect; every suite closes
// its own clients, and the runner stops the servers either way.
const jest = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
runWithServers([
  process.execPath,
  jest,
  '--runInBand',
  '--forceExit',
  ...process.argv.slice(2),
]).catch((error) => {
  process.stderr.write(`[servers] ${error.stack}\n`);
  process.exit(1);
});
