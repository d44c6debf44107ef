// The PSI node conditions as `check-config` and `explain` say them: the settings in force, whether
// this host can have them at all (cgroup v2 with PSI: said only when they are on, since the answer
// differs from host to host), and, for `explain`, the pods' cgroup's pressure now against the
// thresholds, judged as the running agent judges one reading.

import { formatShortDuration } from '../config/go-duration.js';
import type { LoadedConfig } from '../config/types.js';
import { psiConditionType, readingOf, trackerSettings, type PsiSource } from '../daemon/psi-condition-reporter.js';
import { systemClock } from '../api/clock.js';
import { silentLogger } from '../api/logger.js';
import { PSI_RESOURCES, type PsiResource } from '../api/psi.js';
import { classifyPressure } from '../pressure/psi-conditions.js';
import type { NodeSideContext } from './node-side.js';
import { hostPsiSource } from './node-side.js';

const WORDS: Readonly<Record<PsiResource, string>> = { memory: 'memory', io: 'I/O' };

function thresholdsText(config: LoadedConfig): string {
  const psi = config.agent.psiConditions;
  return PSI_RESOURCES.map((r) => (psi[r].enabled ? `${WORDS[r]} avg10 >= ${psi[r].avg10ThresholdPercent}% and avg60 >= ${psi[r].avg60ThresholdPercent}%` : `${WORDS[r]} off`)).join('; ');
}

/** The `check-config` lines: off, or what is compared, the holds, the condition types and taint, and whether this host has PSI for the pods' cgroup. */
export function describePsiConditions(config: LoadedConfig, source: () => PsiSource = () => hostPsiSource(config, silentContext())): string {
  const psi = config.agent.psiConditions;
  if (!psi.enabled) return 'PSI node conditions: off (psiConditions.enabled is false)\n';
  const prefix = config.agent.reporting.conditionTypePrefix;
  const types = PSI_RESOURCES.filter((r) => psi[r].enabled).map((r) => psiConditionType(prefix, r));
  const lines = [
    `PSI node conditions: on, the "${psi.line}" line of the pods' cgroup: ${thresholdsText(config)}`,
    `  set after ${formatShortDuration(psi.setHoldDurationMs)} over both, cleared after ${formatShortDuration(psi.clearHoldDurationMs)} under both, read every ${formatShortDuration(psi.intervalMs)}; ${psi.taint.enabled ? 'a NoSchedule taint while True' : 'no taint'}`,
    `  conditions: ${types.length === 0 ? 'none (both resources off)' : types.join(', ')}`,
  ];
  const host = source();
  try {
    lines.push(host.unavailable === null ? `  on this host: available (${Object.values(host.paths).join(', ')})` : `  on this host: NOT AVAILABLE, none will be reported: ${host.unavailable}`);
  } finally {
    host.close();
  }
  return `${lines.join('\n')}\n`;
}

/** The `explain` lines: each resource's pressure now against its thresholds, on or off. */
export function explainPsiConditions(config: LoadedConfig, source: PsiSource = hostPsiSource(config, silentContext())): string {
  const psi = config.agent.psiConditions;
  const settings = trackerSettings({ ...psi, memory: { ...psi.memory, enabled: true }, io: { ...psi.io, enabled: true } });
  const head = `PSI node conditions (${psi.enabled ? 'on' : 'off: the figures against the configured thresholds'}), the "${psi.line}" line of the pods' cgroup:`;
  try {
    if (source.unavailable !== null) return `${head}\n  not available on this host: ${source.unavailable}\n`;
    const files = source.read();
    const rows = PSI_RESOURCES.map((resource) => {
      const reading = readingOf(files[resource], psi.line);
      const thresholds = settings.resources[resource];
      if (!reading.ok || thresholds === undefined) return `  ${WORDS[resource].padEnd(6)} ${reading.ok ? '' : reading.reason}`;
      const { avg10Percent, avg60Percent } = reading.averages;
      const cmp = (value: number, limit: number): string => `${value.toFixed(2)}% (${value >= limit ? '>=' : '<'} ${limit}%)`;
      const verdict = classifyPressure(reading.averages, thresholds);
      const off = psi[resource].enabled ? '' : ' (this resource is off)';
      return `  ${WORDS[resource].padEnd(6)} avg10 ${cmp(avg10Percent, thresholds.avg10ThresholdPercent)}, avg60 ${cmp(avg60Percent, thresholds.avg60ThresholdPercent)}: ${verdict}${verdict === 'over' ? `, held ${formatShortDuration(psi.setHoldDurationMs)} sets the condition` : verdict === 'under' ? `, held ${formatShortDuration(psi.clearHoldDurationMs)} clears it` : ', neither sets nor clears it'}${off}`;
    });
    return `${head}\n${rows.join('\n')}\n`;
  } finally {
    source.close();
  }
}

function silentContext(): NodeSideContext {
  return { nodeName: '', clock: systemClock, logger: silentLogger };
}
