// Jest setup: suites that start the local stack record billing rows; without this they would
// land in the developer's own .furnish/billing.sqlite (npm start's default). One file per worker.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.FURNISH_BILLING ??= `sqlite:${join(tmpdir(), `furnish-test-billing-${process.pid}.sqlite`)}`;

// One log line per admission decision is what an operator wants and thousands of lines in a test
// run; suites that check the lines pass a logger of their own.
process.env.FURNISH_LOG_LEVEL ??= 'WARNING';
