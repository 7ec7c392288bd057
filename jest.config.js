// ES-module mode: swc strips the types, Node (run with --experimental-vm-modules) links the modules.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023', parser: { syntax: 'typescript' } }, module: { type: 'es6' } }],
  },
  testTimeout: 30000,
  // Two suites at a time (jest's default on 2 cores is one): most of a suite's time is spent
  // waiting on the processes it starts (kube-sim, the stack, kubectl), which the other one uses.
  maxWorkers: 2,
  // A worker is replaced once it holds more than this after a suite. Jest's ESM mode keeps every
  // suite's modules, so a worker reached 650-780 MB by the end of test/unit; a process that large
  // took over 500 ms to go after its 'exit' event, past jest-worker's grace period ("A worker
  // process has failed to exit gracefully": 3 runs of test/unit in 4; with this, none in 5 nor in
  // a full npm test, in the same time).
  workerIdleMemoryLimit: '400MB',
  setupFiles: ['<rootDir>/test/support/billing-env.js'],
  globalSetup: '<rootDir>/test/support/tmpdir-setup.js',
  globalTeardown: '<rootDir>/test/support/tmpdir-teardown.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
