// Types of require-node.js, which stays JavaScript: the bins import it before any TypeScript can run.
export function olderThan(version: string, floor: string): boolean;
export function nodeFloor(): string;
export function requireNode(program: string, hint: string): void;
