// A synthetic `replay` recording of a busy node: 110 pods, one step every 10 s (the kubelet's
// housekeeping interval), each step a full Summary with every pod's memory. The pods come with
// the first step only, as a recording made with the documented capture loop would carry them.
// Memory sits well clear of the thresholds most of the time and dips below the soft and the hard
// threshold for two minutes every hour, so the engine ranks pods and evicts now and then, as it
// would on a real node. Steps are written one line at a time, so a 10,000-step file never sits in
// memory whole.

import { createWriteStream } from 'node:fs';
import type { Pod } from '../../src/api/pod.js';
import type { Summary } from '../../src/api/summary.js';
import { benchPod, syntheticUid } from './bench-pods.js';

/** The `examples/memory-pressure.config.yaml` settings: soft 1Gi with a grace period, hard 500Mi, min reclaim. */
export const RECORDING_CONFIG = `apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: 500Mi
evictionSoft:
  memory.available: 1Gi
evictionSoftGracePeriod:
  memory.available: 30s
evictionMinimumReclaim:
  memory.available: 256Mi
evictionMaxPodGracePeriod: 30
evictionPressureTransitionPeriod: 60s
`;

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const NODE_NAME = 'replay-node';
const CAPACITY_BYTES = 64 * GiB;
const START_MS = Date.UTC(2026, 0, 1);
const STEP_MS = 10_000;

export function recordingPods(podCount: number): Pod[] {
  return Array.from({ length: podCount }, (_, i) => benchPod({ name: `app-${i}`, nodeName: NODE_NAME, memoryRequest: `${64 + (i % 8) * 64}Mi`, uid: syntheticUid(i) }));
}

/** The step's Summary: pod i uses a slowly wandering amount; node usage is their sum plus the system's. */
export function recordingSummary(step: number, podCount: number): Summary {
  const time = new Date(START_MS + step * STEP_MS).toISOString();
  const pods = [];
  let podsBytes = 0;
  for (let i = 0; i < podCount; i++) {
    const workingSetBytes = Math.round((96 + (i % 8) * 64 + 48 * Math.sin(step / 30 + i)) * MiB);
    podsBytes += workingSetBytes;
    const memory = { time, workingSetBytes, usageBytes: workingSetBytes + 4 * MiB };
    pods.push({ podRef: { name: `app-${i}`, namespace: 'bench', uid: syntheticUid(i) }, memory, containers: [{ name: 'main', memory }] });
  }
  // Two minutes of every hour under pressure: below the soft threshold, and at its deepest below the hard one.
  const minuteOfHour = ((step * STEP_MS) / 60_000) % 60;
  const pressureBytes = minuteOfHour < 1 ? 900 * MiB : minuteOfHour < 2 ? 400 * MiB : 8 * GiB;
  const workingSetBytes = CAPACITY_BYTES - pressureBytes;
  return {
    node: {
      nodeName: NODE_NAME,
      memory: { time, availableBytes: pressureBytes, workingSetBytes, usageBytes: workingSetBytes + Math.round(podsBytes / 64) },
    },
    pods,
  };
}

/** Writes `steps` steps to `path`; resolves with the file's size in bytes. */
export async function writeRecording(path: string, steps: number, podCount: number): Promise<number> {
  const out = createWriteStream(path);
  const pods = recordingPods(podCount);
  let bytes = 0;
  for (let step = 0; step < steps; step++) {
    const line = {
      time: new Date(START_MS + step * STEP_MS).toISOString(),
      summary: recordingSummary(step, podCount),
      ...(step === 0 ? { pods, node: { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME } } } : {}),
    };
    const text = `${JSON.stringify(line)}\n`;
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => {
    out.once('error', reject);
    out.end(() => resolve());
  });
  return bytes;
}
