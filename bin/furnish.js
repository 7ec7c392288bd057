#!/usr/bin/env node
// The `furnish` CLI. Node >= 22.18 runs the TypeScript sources directly (type stripping).
import '../shared/cli/main.ts';
