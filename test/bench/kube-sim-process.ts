// The benchmarks' kube-sim process: the one `npm start` runs as its test cluster.
export { startKubeSimProcess, type KubeSimProcess } from '../../scripts/start/kube-sim-process.ts';
