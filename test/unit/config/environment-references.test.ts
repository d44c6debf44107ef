// `$(NAME)` in observe.kubeletUrl: expanded from the environment (the node's address from the
// downward API), refused with the names when a variable is not set.

import { expandEnvironmentReferences } from '../../../src/config/environment-references.js';
import { parseConfigText } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';

const cases: { name: string; text: string; env: Record<string, string>; expanded: string | null; missing?: string[] }[] = [
  { name: 'no reference', text: 'https://127.0.0.1:10250', env: {}, expanded: 'https://127.0.0.1:10250' },
  { name: 'the node IP', text: 'https://$(NODE_IP):10250', env: { NODE_IP: '10.0.0.7' }, expanded: 'https://10.0.0.7:10250' },
  { name: 'two references', text: 'https://$(NODE_NAME).$(DOMAIN):10250', env: { NODE_NAME: 'worker-7', DOMAIN: 'nodes.example.com' }, expanded: 'https://worker-7.nodes.example.com:10250' },
  { name: 'an escaped reference stays literal', text: 'https://x/$$(NODE_IP)', env: { NODE_IP: '10.0.0.7' }, expanded: 'https://x/$(NODE_IP)' },
  { name: 'not set', text: 'https://$(NODE_IP):10250', env: {}, expanded: null, missing: ['NODE_IP'] },
  { name: 'set but empty', text: 'https://$(NODE_IP):$(PORT)', env: { NODE_IP: '', PORT: '10250' }, expanded: null, missing: ['NODE_IP'] },
  { name: 'a lone $ is text', text: 'https://h/$x', env: {}, expanded: 'https://h/$x' },
];
test.each(cases)('$name', ({ text, env, expanded, missing }) => {
  expect(expandEnvironmentReferences(text, env)).toEqual(expanded === null ? { missing } : { value: expanded });
});

describe('observe.kubeletUrl with $(NODE_IP)', () => {
  const saved = process.env.NODE_IP;
  afterEach(() => {
    if (saved === undefined) delete process.env.NODE_IP;
    else process.env.NODE_IP = saved;
  });
  const text = 'apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nobserve:\n  source: kubelet\n  kubeletUrl: https://$(NODE_IP):10250\n';

  test('is the node address the pod was given', () => {
    process.env.NODE_IP = '192.168.4.21';
    expect(parseConfigText(text, 'config.yaml').agent.observe.kubeletUrl).toBe('https://192.168.4.21:10250');
  });

  test('is refused, naming the variable, where the environment does not set it', () => {
    delete process.env.NODE_IP;
    let problems: unknown[] = [];
    try {
      parseConfigText(text, 'config.yaml');
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems.map((p) => [p.field, p.message]);
    }
    expect(problems).toEqual([['observe.kubeletUrl', expect.stringContaining("names $(NODE_IP), which the environment does not set (the chart sets NODE_IP from the pod's status.hostIP")]]);
  });
});
