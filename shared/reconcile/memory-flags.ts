// Node flags of Furnish's long-running processes (the relay's container, the reconcilers' function
// instances), one home for every place that starts them. V8 sizes its young generation from the
// memory the process sees: two 64 MB semi-spaces on a host of 16 GB or more, about 1 MB under a
// 256 MiB container limit. Nearly all of it is garbage waiting for the next scavenge, yet it is
// RSS: `npm run bench -- memory` measured the relay at 108 MB and the reconciler at 125 MB of young
// generation (of 294 and 347 MB RSS) after 1,000 namespaces, against 15-30 MB of retained heap.
// A fixed cap makes their memory the same on every host and flat in the number of namespaces; the
// bench reports what it costs in scavenge time.
export const SEMI_SPACE_MB = 8;

export const NODE_MEMORY_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MB}`];
