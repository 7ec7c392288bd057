#!/usr/bin/env node
// The `furnish` CLI in a clone: its TypeScript sources run as they are (type stripping), which needs
// the Node that package.json's `engines` names, checked first (require-node.js). The published
// package has its own bin, which runs the bundle instead (scripts/pack-cli.ts).
import { requireNode } from './require-node.js';

requireNode('furnish', 'In a clone of the repository, `npx --no furnish` runs it on the Node the project pins (npm install first).');
// Not awaited: a top-level await would not parse on the Nodes this check is for.
import('../shared/cli/main.ts');
