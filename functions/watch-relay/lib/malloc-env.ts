// glibc malloc settings of the relay's container (infra/relay/deployment.yaml; the population
// bench starts its relay with them, so that it measures the deployed process). Why: the relay's
// own data stays small (about 500 bytes of heap per namespace), yet malloc's RSS sometimes jumped
// from ~28 to ~84 MB while 9,000 namespaces were added (5 arenas, one per thread that allocated,
// each keeping what it once held; glibc's mmap threshold rising after each large free), which
// alone made RSS 1.6x from 1,000 to 10,000 namespaces. Two arenas and a fixed 128 KiB mmap
// threshold (large buffers, such as a list page's body, go back to the system when freed) kept
// malloc at 15-16 MB at both sizes (docs/performance.md, Population).
export const RELAY_MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };
