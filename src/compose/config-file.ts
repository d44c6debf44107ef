// The configuration the commands run with: the file read once through src/config's one reader,
// with the command line's `--host-root` laid over it, and how to read a new version of the text
// the same way (hot reload).

import { posix } from 'node:path';
import { readConfigFile, parseConfigText } from '../config/load.js';
import type { LoadedConfig } from '../config/types.js';
import { AgentError } from '../errors.js';

export interface AgentConfigFile {
  readonly path: string;
  readonly config: LoadedConfig;
  /** The text it was loaded from (the reload compares against it). */
  readonly text: string;
  /** Loads a new version of the file's text as this one was loaded; throws ConfigError. */
  readonly parse: (text: string) => LoadedConfig;
}

/** Reads and validates the configuration file; a ConfigError lists every problem. */
export async function readAgentConfig(path: string, overrides: { readonly hostRoot?: string | undefined } = {}): Promise<AgentConfigFile> {
  if (overrides.hostRoot !== undefined && !posix.isAbsolute(overrides.hostRoot)) throw new AgentError('EVA_ERR_USAGE', `--host-root must be an absolute path: ${overrides.hostRoot}`);
  const parse = (text: string): LoadedConfig => withHostRoot(parseConfigText(text, path), overrides.hostRoot);
  const { config, text } = await readConfigFile(path);
  return { path, config: withHostRoot(config, overrides.hostRoot), text, parse };
}

/**
 * `--host-root` overrides `observe.hostRoot`: a KubeletConfiguration has no agent fields, so this
 * is how an agent reading the kubelet's own file finds the host mounted at /host.
 */
function withHostRoot(config: LoadedConfig, hostRoot: string | undefined): LoadedConfig {
  if (hostRoot === undefined) return config;
  return { ...config, agent: { ...config.agent, observe: { ...config.agent.observe, hostRoot } } };
}
