// The parts of @kubernetes/client-node the agent uses, and nothing else. The build bundles this
// file with the library, tree-shaken (scripts/bundle-client.mjs): the whole library costs about
// 70 MiB of RSS to load, most of it the generated clients of every API group and their source
// (ObservableAPI.js alone is 6 MB, kept in the heap as source), where these parts cost about 27.

export { AppsV1Api, CoreV1Api, KubeConfig, ListWatch, Observable, PatchStrategy, Watch } from '@kubernetes/client-node';
