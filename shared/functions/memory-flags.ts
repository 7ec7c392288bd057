// Node flags of Furnish's long-running processes (the relay's container, the reconcilers' function
// instances), one home for every place that starts them. V8 sizes its heap from the memory the
// process sees: on a host of 16 GB or more, two 64 MB semi-spaces and an old generation allowed to
// grow to 4x what is live before a full GC; under a 256 MiB container limit, 1 MB semi-spaces and
// a growing factor near 1.3. What the relay and the reconciler hold is 15-30 MB either way; the
// rest is garbage waiting for a GC, yet RSS: `npm run bench -- memory` measured them at 294 and
// 347 MB after 1,000 namespaces with V8's defaults on such a host (108 and 125 MB of it young
// generation, peaks of 116 and 152 MB of heap), 143 and 162 MB with these flags (1.09x and 1.07x
// their RSS at 100 namespaces; the relay 1.18x at 10,000). So their memory is the same on every
// host; the old generation's limit is ~8x the live heap, and fits the relay's 256 MiB.
export const SEMI_SPACE_MB = 8;
export const OLD_SPACE_MB = 192;

export const NODE_MEMORY_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MB}`, `--max-old-space-size=${OLD_SPACE_MB}`];
