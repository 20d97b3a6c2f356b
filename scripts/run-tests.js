#!/usr/bin/env node
'use strict';
// `npm test`: the whole suite (unit, integration, e2e) against real servers started for the run.
// Extra arguments go to Jest, e.g. `npm test -- test/substrate`.
const path = require('node:path');
const { runWithServers } = require('./run-with-servers');

// One test file at a time, each in a fresh worker process (--maxWorkers=1, and a worker is
// replaced after any file that leaves it above 50 MB, which is every file): what one e2e suite
// leaves running (a client's retry timers, a socket) never slows the next one. The simulation
// specs ran 20 times slower in one shared process (--runInBand) after the e2e suites.
// --forceExit: kafkajs keeps retry timers alive for a while after disconnect; every suite closes
// its own clients, and the runner stops the servers either way.
const jest = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
runWithServers([
  process.execPath,
  jest,
  '--maxWorkers=1',
  '--workerIdleMemoryLimit=50MB',
  '--forceExit',
  ...process.argv.slice(2),
]).catch((error) => {
  process.stderr.write(`[servers] ${error.stack}\n`);
  process.exit(1);
});
