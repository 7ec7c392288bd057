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
  setupFiles: ['<rootDir>/test/support/billing-env.js'],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
