// Jest setup: suites that start the local stack record billing rows; without this they would
// land in the developer's own .furnish/billing.sqlite (npm start's default). One file per worker.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.FURNISH_BILLING ??= `sqlite:${join(tmpdir(), `furnish-test-billing-${process.pid}.sqlite`)}`;
