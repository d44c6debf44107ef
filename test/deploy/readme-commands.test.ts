// The README's install commands as the end-to-end tests run them: parsed out of README.md, the same
// in the deployment guide's quick start, none of them the chart's old `namespace.create` (which
// failed on an empty cluster), and the parser refusing what it cannot run faithfully.

import { readFileSync } from 'node:fs';
import { blockAfterHeading, DEPLOYMENT_DOC_PATH, readmeInstallCommands, shellCommands } from './readme-commands.js';

test('the README installs with three commands: create the namespace, label it for Pod Security Admission, helm install', () => {
  const commands = readmeInstallCommands();
  expect(commands.map((c) => c.argv.slice(0, 2))).toEqual([
    ['kubectl', 'create'],
    ['kubectl', 'label'],
    ['helm', 'install'],
  ]);
  expect(commands[1]?.argv).toEqual(expect.arrayContaining(['pod-security.kubernetes.io/enforce=privileged']));
  expect(commands.flatMap((c) => c.argv).some((a) => a.startsWith('namespace.create'))).toBe(false);
});

test("the deployment guide's quick start runs the README's commands, word for word, in the same order", () => {
  const quickStart = shellCommands(blockAfterHeading(readFileSync(DEPLOYMENT_DOC_PATH, 'utf8'), '## Quick start').body).map((c) => c.text);
  const readme = readmeInstallCommands().map((c) => c.text);
  const at = quickStart.indexOf(readme[0] as string);
  expect(quickStart.slice(at, at + readme.length)).toEqual(readme);
});

test('no documented helm command uses the removed namespace.create value', () => {
  for (const path of [DEPLOYMENT_DOC_PATH]) expect(readFileSync(path, 'utf8')).not.toContain('namespace.create');
});

const parsed: { name: string; text: string; argv: string[] }[] = [
  { name: 'continuations joined, comments dropped', text: '# install\nhelm install x deploy/chart \\\n  --set a=b\n', argv: ['helm', 'install', 'x', 'deploy/chart', '--set', 'a=b'] },
  { name: 'quotes', text: `kubectl get nodes -o 'custom-columns=A:.b[?(@.c=="d")]' "x y"`, argv: ['kubectl', 'get', 'nodes', '-o', 'custom-columns=A:.b[?(@.c=="d")]', 'x y'] },
  { name: 'a backslash escape', text: 'helm install --set config.evictionSoft.memory\\.available=500Mi', argv: ['helm', 'install', '--set', 'config.evictionSoft.memory.available=500Mi'] },
];
test.each(parsed)('parses $name', ({ text, argv }) => {
  expect(shellCommands(text).map((c) => c.argv)).toEqual([argv]);
});

test.each(['kubectl get pods | grep x', 'helm install $NAME x', 'kubectl apply -f - < x.yaml'])('refuses %s, which needs a shell', (text) => {
  expect(() => shellCommands(text)).toThrow('only simple commands are supported');
});
