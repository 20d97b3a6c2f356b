'use strict';
/**
 * Lists every skipped test by name (the reason is in the name, see describeWith) and closes the
 * run with one plain line: "tests: N passed, N failed, N skipped". Nothing is skipped silently.
 */
class SkipReporter {
  onRunComplete(_contexts, results) {
    const skipped = [];
    for (const file of results.testResults) {
      for (const test of file.testResults) {
        if (test.status === 'pending' || test.status === 'skipped' || test.status === 'todo') {
          skipped.push(test.fullName);
        }
      }
    }
    const out = [];
    if (skipped.length > 0) {
      const kind =
        process.env.OUTBOX_TEST_MONGODB_KIND || (process.env.MONGODB_URI ? 'mongodb' : 'none');
      const why = process.env.OUTBOX_TEST_MONGODB_REASON;
      out.push('', `MongoDB in this run: ${kind}${why ? ` (${why})` : ''}`);
      out.push(`Skipped tests (${skipped.length}), each with its reason:`);
      for (const name of skipped) out.push(`  skipped: ${name}`);
    }
    // A suite that failed to run counts as one failure (it has no failed tests of its own).
    const failed = results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
    out.push(
      '',
      `tests: ${results.numPassedTests} passed, ${failed} failed, ${skipped.length} skipped`,
      '',
    );
    process.stdout.write(out.join('\n'));
  }
}

module.exports = SkipReporter;
