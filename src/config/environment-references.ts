// `$(NAME)` references in a setting, expanded from the agent's environment, with Kubernetes' own
// syntax: a DaemonSet's settings are the same on every node, but a few values (the node's address
// for observe.kubeletUrl) only each pod knows, through the downward API (`env` with `fieldRef`).
// `$$(NAME)` stays the literal text `$(NAME)`, as in a container's args.

const REFERENCE = /\$(\$?)\(([A-Za-z_][A-Za-z0-9_]*)\)/g;

export type Expansion = { readonly value: string; readonly missing?: undefined } | { readonly value?: undefined; readonly missing: readonly string[] };

/** `text` with every `$(NAME)` replaced by the variable's value; the names not set (or empty), if any. */
export function expandEnvironmentReferences(text: string, env: Readonly<Record<string, string | undefined>>): Expansion {
  const missing: string[] = [];
  const value = text.replace(REFERENCE, (whole, escaped: string, name: string) => {
    if (escaped === '$') return whole.slice(1);
    const found = env[name];
    if (found === undefined || found === '') missing.push(name);
    return found ?? '';
  });
  return missing.length > 0 ? { missing: [...new Set(missing)] } : { value };
}
